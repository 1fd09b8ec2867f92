//! Configuration of the ns-2-compatible TCP sender and sink.
//!
//! Every default is ns-2.35's (`tcl/lib/ns-default.tcl`) unless the field says otherwise; the
//! theses' TCP baselines are ns-2 agents (000 §3.1, 002 Ch. 4: `Agent/TCP/Sack1`; 003 §5: SACK,
//! no delayed ACK, 1000 B packets, maximum window 200), so matching ns-2 is what makes their
//! comparisons reproducible. The defaults suit the dumbbells of the simulator issue (2 Mb/s to
//! 1 Gb/s, 10–100 ms): the one deliberate departure from ns-2 is [`TcpConfig::max_window`].

use crate::rtt::TcpRttConfig;
use crate::time::Dur;
use serde::Deserialize;

/// Which loss recovery the sender runs. In a configuration it is written `"reno"`,
/// `"newreno"` or `"sack"`; scenario files usually pick it through the protocol name instead
/// ([`Variant::from_protocol`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// `Agent/TCP/Reno`: fast retransmit and fast recovery with window inflation; recovery ends
    /// on the first new ACK, so a second loss in the window usually waits for a timeout.
    Reno,
    /// `Agent/TCP/Newreno`: stays in recovery until the ACK covers the recovery point,
    /// retransmitting one segment per partial ACK (RFC 2582/6582).
    NewReno,
    /// `Agent/TCP/Sack1` with `Agent/TCPSink/Sack1`: SACK scoreboard and pipe-limited sending
    /// during recovery (RFC 2018, the Fall & Floyd 1996 "Sack1" algorithm).
    Sack,
}

impl Variant {
    /// The scenario-file name (`tcp-reno`, `tcp-newreno`, `tcp-sack`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Reno => "tcp-reno",
            Variant::NewReno => "tcp-newreno",
            Variant::Sack => "tcp-sack",
        }
    }

    /// The variant a scenario's protocol name selects (`tcp-reno`, `tcp-newreno`, `tcp-sack`).
    pub fn from_protocol(name: &str) -> Option<Variant> {
        match name {
            "tcp-reno" => Some(Variant::Reno),
            "tcp-newreno" => Some(Variant::NewReno),
            "tcp-sack" => Some(Variant::Sack),
            _ => None,
        }
    }
}

/// The window increase and decrease the sender runs; loss recovery is [`Variant`]'s either way.
/// In a configuration it is written `congestion = "reno"` or
/// `congestion = { ttfwc = { tp = 0.9 } }`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Congestion {
    /// ns-2's Reno rules (`opencwnd` and `slowdown`), the default.
    #[default]
    Reno,
    /// TTFWC (000): sender-only, the equation window with the tuning parameter's boost.
    Ttfwc(super::ttfwc::TtfwcConfig),
    /// GAIMD (003 Table 2.1.2), [`super::friendly`].
    Gaimd(super::friendly::GaimdConfig),
    /// A binomial scheme, IIAD or SQRT by its exponents (003 Table 2.1.2), [`super::friendly`].
    Binomial(super::friendly::BinomialConfig),
    /// SIMD (003 Table 2.1.2), [`super::friendly`].
    Simd(super::friendly::SimdConfig),
    /// AIAD/H (003 Table 2.1.2), [`super::friendly`].
    Aiadh(super::friendly::AiadhConfig),
    /// Predictable-throughput TCP (001): Reno's rules with the target-driven increase `k`.
    Ptcp(super::ptcp::PtcpConfig),
    /// CUBIC (RFC 9438), [`super::cubic`]: the cubic increase, β = 0.7 decrease.
    Cubic(super::cubic::CubicConfig),
}

impl Congestion {
    /// The window rule of 003's window-based schemes, when this is one of them.
    pub fn friendly_rule(&self) -> Option<super::friendly::Rule> {
        use super::friendly::Rule;
        match self {
            Congestion::Reno
            | Congestion::Ttfwc(_)
            | Congestion::Ptcp(_)
            | Congestion::Cubic(_) => None,
            Congestion::Gaimd(c) => Some(Rule::Gaimd(c.clone())),
            Congestion::Binomial(c) => Some(Rule::Binomial(c.clone())),
            Congestion::Simd(c) => Some(Rule::Simd(c.clone())),
            Congestion::Aiadh(c) => Some(Rule::Aiadh(c.clone())),
        }
    }
}

/// Sender and sink parameters. Build the pair from one value so that the sink generates SACK
/// blocks exactly when the sender is [`Variant::Sack`] (ns-2 pairs `Sack1` with
/// `TCPSink/Sack1`, Reno and NewReno with the plain `TCPSink`).
///
/// Deserialises by field name with every field optional (`params = { max_window = 200 }`);
/// sizes take `"1000B"` or plain bytes, durations `"100ms"` or plain seconds. Call
/// [`TcpConfig::validate`] on what a file produced.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Loss recovery algorithm.
    pub variant: Variant,
    /// Payload bytes per segment. ns-2 `packetSize_ 1000`; 003 §5 and the simulator issue use
    /// 1000 B segments.
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub segment_size: u32,
    /// TCP/IP header bytes added to every data segment on the wire (ns-2
    /// `tcpip_base_hdr_size_ 40`, added by `TcpAgent::headersize()` because `useHeaders_` is
    /// true): a data packet is 1040 bytes.
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub header_size: u32,
    /// Extra header bytes when [`TcpConfig::timestamps`] is on (ns-2 `ts_option_size_ 10`).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub ts_option_size: u32,
    /// Bytes of a bare ACK (ns-2 `Agent/TCPSink set packetSize_ 40`).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub ack_size: u32,
    /// Bytes added to an ACK per SACK block (ns-2 `Sacker::append_ack` adds 8 per block).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub sack_block_size: u32,
    /// Initial congestion window in segments (ns-2 `windowInit_ 2`, `windowInitOption_ 1`).
    pub window_init: u32,
    /// Receiver's advertised window, the cap on the sending window and the initial ssthresh, in
    /// segments (ns-2 `window_`). ns-2's default is **20**, which would hold a flow to
    /// 20 × 1040 B per RTT (3.8 Mb/s at 44 ms) and make the network irrelevant; our default,
    /// 10 000, never binds on the scenarios we run (a 1 Gb/s × 100 ms path holds ~12 000
    /// segments, shared by many flows) and is what `bench/ns2/dumbbell.tcl` sets `window_` to, so
    /// both simulators see the same cap. 003 §5 uses 200: set it per scenario.
    pub max_window: u32,
    /// Model the SYN exchange: segment 0 is a 40-byte SYN sent with a window of one, and the
    /// window becomes [`TcpConfig::window_init`] when it is acknowledged (ns-2 `syn_ true` with
    /// `delay_growth_ true`, `TcpAgent::set_initial_window`). Costs one RTT at the start.
    pub syn: bool,
    /// Duplicate ACKs that trigger fast retransmit (ns-2 `numdupacks_ 3`; RFC 5681 §3.2).
    pub dupack_threshold: u32,
    /// Congestion-avoidance increase per ACK is `increase_num / cwnd` (ns-2 `increase_num_ 1.0`
    /// with `windowOption_ 1`, `TcpAgent::opencwnd`).
    pub increase_num: f64,
    /// Multiplicative decrease on a fast retransmit after the first one (ns-2 `decrease_num_ 0.5`;
    /// the first decrease is always a halving, `TcpAgent::slowdown`).
    pub decrease_num: f64,
    /// Most segments sent in response to one ACK, 0 for no limit (ns-2 `maxburst_ 0`).
    pub max_burst: u32,
    /// ns-2's `overhead_` (default 0, off): each time the sender could send new segments on an
    /// ACK or a timeout it first waits a uniform random time in `[0, overhead)` (ns-2's delayed-
    /// send timer, `Random::uniform(overhead_)`), then sends everything the window allows at
    /// once; retransmissions on duplicate ACKs are not delayed. It is the usual ns-2 means of
    /// breaking the deterministic phase effects of DropTail queues (Floyd and Jacobson, "On
    /// traffic phase effects in packet-switched gateways", 1992), which a simulated path has
    /// and a real host's processing jitter does not. The draws come from
    /// [`TcpConfig::overhead_seed`].
    pub overhead: Dur,
    /// Seed of the `overhead` draws; the simulator gives each flow its own (the run's seed and
    /// the flow's id, stream `flow/{id}/overhead`) unless `params` sets it.
    pub overhead_seed: u64,
    /// Limited transmit: send a new segment on each of the first two duplicate ACKs if the
    /// window allows cwnd + dupacks (ns-2 `singledup_ 1`; RFC 3042).
    pub limited_transmit: bool,
    /// On a fast retransmit set the window to the new `ssthresh` (whole segments, at least 2)
    /// instead of ns-2's unrounded `w/2` (`slowdown` with `CLOSE_CWND_HALF`). 4.4BSD's
    /// `tcp_input`, the TCP of the Dummynet hosts that 004 Ch. 4 ran against, sets
    /// `snd_ssthresh = max(min(snd_wnd, snd_cwnd)/2, 2 segments)` and leaves fast recovery with
    /// `snd_cwnd = snd_ssthresh`, so its window never falls below two segments after a fast
    /// retransmit (RFC 2581 §3.2 the same); ns-2's falls to 1-2 at a window of 2-3. Default off
    /// (ns-2).
    pub cwnd_to_ssthresh: bool,
    /// Compute the decrease from the fractional window (ns-2 `precisionReduce_ true`, the
    /// default since 2006/1/24): `halfwin = windowd()/2`, `decreasewin = decrease_num_ ·
    /// windowd()`. Off gives the older ns-2 `slowdown`, which the theses that ran ns-2.1b9 had
    /// (003 §5; ns-default.tcl then read `precisionReduce_ false`): the whole-segment window
    /// `window() = int(cwnd)` is halved or scaled and rounded down (`int(window()/2)`,
    /// `int(decrease_num_ · window())`, a scheme's own rule likewise), so a fast retransmit at
    /// a window of 3 leaves 1 segment, not 1.5 (`tcp.cc` `TcpAgent::slowdown`).
    pub precision_reduce: bool,
    /// Forbid a second fast retransmit until the ACK passes the recovery point set by the last
    /// one or by a timeout (ns-2 `bugFix_ true`; RFC 2582 §3 "careful" variant). This is what
    /// makes Reno wait for a timeout after two losses in one window.
    pub bug_fix: bool,
    /// Take RTT samples from echoed timestamps on every new ACK instead of timing one segment
    /// per RTT (ns-2 `timestamps_ false`, so the default times one segment with `rtt_seq_`;
    /// either way no sample is taken across a retransmission, Karn's rule).
    pub timestamps: bool,
    /// Sack1 only: send two segments on each partial ACK during recovery (ns-2 `partial_ack_
    /// false`).
    pub sack_partial_ack: bool,
    /// NewReno only: deflate the inflated window by the amount a partial ACK acknowledges
    /// (ns-2 `partial_window_deflation_ 1`; RFC 6582 §3.2 step 3).
    pub newreno_partial_window_deflation: bool,
    /// NewReno only: re-arm the retransmission timer on the first partial ACK of a recovery only
    /// (ns-2 `newreno_changes1_ 1`; RFC 6582 §3.2 "Impatient" variant).
    pub newreno_impatient: bool,
    /// RTO estimation (SRTT/RTTVAR, 10 ms tick, 200 ms minimum, 3 s initial, 60 s maximum,
    /// exponential back-off): ns-2.35's defaults live in [`TcpRttConfig::default`]. Its
    /// `boot_time` is the phase of the sender's coarse clock, which ns-2 draws uniformly in
    /// `[0, tcpTick_)` per agent (`TcpAgent::reset`); it is 0 here unless the driver draws it
    /// from the flow's own random stream, so runs stay deterministic.
    pub rtt: TcpRttConfig,
    /// Sink: the most SACK blocks per ACK, at most [`super::MAX_SACK_BLOCKS`] (ns-2
    /// `maxSackBlocks_ 3`). Used only with [`Variant::Sack`].
    pub max_sack_blocks: u8,
    /// Sink: delay ACKs for in-order segments, acknowledging every second one or after this
    /// interval (ns-2 `Agent/TCPSink/DelAck`, `interval_ 100ms`). `None`, the default, ACKs every
    /// segment (plain `Agent/TCPSink`; 003 §5 "no delayed ACKs").
    pub delayed_ack: Option<Dur>,
    /// Sink: send a held ACK at the next boundary of a grid of [`TcpConfig::delayed_ack`]
    /// intervals counted from time 0, not a whole interval after the segment. 4.4BSD and the
    /// FreeBSD of 004's Dummynet hosts flush delayed ACKs from `tcp_fasttimo`, which runs every
    /// 200 ms (`PR_FASTHZ` 5) for all connections, so a held ACK waits 0-200 ms (100 ms on
    /// average; Stevens, TCP/IP Illustrated Vol. 1, Sec. 19.3, which 004 Sec. 2.1 cites as
    /// \[Ste94\] for delayed ACKs). Off by default (ns-2's `DelAckSink` times each segment).
    pub delayed_ack_tick: bool,
    /// Congestion control: Reno's increase and decrease (ns-2's, the default) or TTFWC's
    /// (000, [`super::ttfwc`]).
    pub congestion: Congestion,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: Variant::Sack, // the theses' baseline (000 §3.1, 002 Ch. 4, 003 §5)
            segment_size: 1000,     // packetSize_
            header_size: 40,        // tcpip_base_hdr_size_
            ts_option_size: 10,     // ts_option_size_
            ack_size: 40,           // Agent/TCPSink packetSize_
            sack_block_size: 8,     // Sacker::append_ack
            window_init: 2,         // windowInit_
            max_window: 10_000,     // see the field doc: ns-2's 20 would cap throughput
            syn: true,              // syn_ with delay_growth_
            dupack_threshold: 3,    // numdupacks_
            increase_num: 1.0,      // increase_num_
            decrease_num: 0.5,      // decrease_num_
            max_burst: 0,           // maxburst_
            overhead: Dur::ZERO,    // overhead_
            overhead_seed: 0,
            limited_transmit: true,                 // singledup_ 1
            cwnd_to_ssthresh: false,                // slowdown: cwnd_ = halfwin
            precision_reduce: true,                 // precisionReduce_ true
            bug_fix: true,                          // bugFix_
            timestamps: false,                      // timestamps_
            sack_partial_ack: false,                // partial_ack_
            newreno_partial_window_deflation: true, // partial_window_deflation_ 1
            newreno_impatient: true,                // newreno_changes1_ 1
            rtt: TcpRttConfig::default(),           // tcpTick_, minrto_, rtxcur_init_, maxrto_
            max_sack_blocks: 3,                     // maxSackBlocks_
            delayed_ack: None,                      // Agent/TCPSink (no DelAck)
            delayed_ack_tick: false,                // DelAckSink: interval_ after the held segment
            congestion: Congestion::Reno,           // ns-2's TcpAgent
        }
    }
}

impl TcpConfig {
    /// The default configuration with another recovery variant.
    pub fn with_variant(variant: Variant) -> TcpConfig {
        TcpConfig {
            variant,
            ..TcpConfig::default()
        }
    }

    /// ns-2's `Agent/TCPSink/DelAck` interval (`interval_ 100ms`).
    pub const NS2_DELACK_INTERVAL: Dur = Dur::from_millis(100);
    /// ns-2's default advertised window (`window_ 20`), for scenarios that want it.
    pub const NS2_DEFAULT_WINDOW: u32 = 20;

    /// Checks every field; the message names the first bad one. [`super::TcpSender::new`]
    /// repairs rather than rejects (so it cannot fail), which is why loaders call this.
    pub fn validate(&self) -> Result<(), String> {
        if self.overhead > Dur::from_secs(10) {
            return Err(format!(
                "overhead must be at most 10 s, got {} s",
                self.overhead.as_secs_f64()
            ));
        }
        if self.segment_size == 0 {
            return Err("segment_size must be positive".into());
        }
        if self.window_init == 0 {
            return Err("window_init must be at least 1 segment".into());
        }
        if self.max_window == 0 {
            return Err("max_window must be at least 1 segment".into());
        }
        if self.dupack_threshold == 0 {
            return Err("dupack_threshold must be at least 1".into());
        }
        if !(self.increase_num.is_finite() && self.increase_num > 0.0) {
            return Err(format!(
                "increase_num must be a positive number, got {}",
                self.increase_num
            ));
        }
        if !(self.decrease_num > 0.0 && self.decrease_num < 1.0) {
            return Err(format!(
                "decrease_num must lie in (0, 1), got {}",
                self.decrease_num
            ));
        }
        if self.max_sack_blocks as usize > super::MAX_SACK_BLOCKS {
            return Err(format!(
                "max_sack_blocks must be at most {}, got {}",
                super::MAX_SACK_BLOCKS,
                self.max_sack_blocks
            ));
        }
        if self.delayed_ack.is_some_and(|d| d.is_zero()) {
            return Err(
                "delayed_ack interval must be positive (omit it for an ACK per segment)".into(),
            );
        }
        if let Congestion::Ttfwc(t) = &self.congestion {
            t.validate().map_err(|e| format!("congestion.ttfwc.{e}"))?;
        }
        if let Some(r) = self.congestion.friendly_rule() {
            r.validate()
                .map_err(|e| format!("congestion.{}.{e}", r.name()))?;
        }
        if let Congestion::Ptcp(p) = &self.congestion {
            p.validate().map_err(|e| format!("congestion.ptcp.{e}"))?;
        }
        if let Congestion::Cubic(c) = &self.congestion {
            c.validate().map_err(|e| format!("congestion.cubic.{e}"))?;
        }
        self.rtt.validate().map_err(|e| e.to_string())
    }

    /// Header bytes on every data segment but the SYN (ns-2 `TcpAgent::headersize()`).
    pub fn data_header_size(&self) -> u32 {
        if self.timestamps {
            self.header_size.saturating_add(self.ts_option_size)
        } else {
            self.header_size
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_params_set_fields_by_name() {
        let c: TcpConfig = toml::from_str(
            r#"
            variant = "newreno"
            max_window = 200
            segment_size = "1460B"
            delayed_ack = "100ms"
            rtt = { min_rto = "1s", tick = 0.5 }
            "#,
        )
        .unwrap();
        assert_eq!(c.variant, Variant::NewReno);
        assert_eq!((c.max_window, c.segment_size), (200, 1460));
        assert_eq!(c.delayed_ack, Some(TcpConfig::NS2_DELACK_INTERVAL));
        assert_eq!(c.rtt.min_rto, Dur::from_secs(1));
        assert_eq!(c.rtt.tick, Dur::from_millis(500));
        assert_eq!(c.window_init, 2, "unset fields keep ns-2's defaults");
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(
            toml::from_str::<TcpConfig>("").unwrap(),
            TcpConfig::default()
        );
    }

    #[test]
    fn bad_params_are_rejected_by_name() {
        let e = toml::from_str::<TcpConfig>("max_windw = 3").unwrap_err();
        assert!(e.to_string().contains("max_windw"), "{e}");
        let e = toml::from_str::<TcpConfig>(r#"variant = "vegas""#).unwrap_err();
        assert!(e.to_string().contains("vegas"), "{e}");
        let bad = |f: fn(&mut TcpConfig)| {
            let mut c = TcpConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(bad(|c| c.max_window = 0).contains("max_window"));
        assert!(bad(|c| c.segment_size = 0).contains("segment_size"));
        assert!(bad(|c| c.decrease_num = 1.0).contains("decrease_num"));
        assert!(bad(|c| c.max_sack_blocks = 4).contains("max_sack_blocks"));
        assert!(bad(|c| c.delayed_ack = Some(Dur::ZERO)).contains("delayed_ack"));
        assert!(bad(|c| c.rtt.min_rto = Dur::from_secs(100)).contains("min_rto"));
    }

    #[test]
    fn protocol_names_select_the_variant() {
        for v in [Variant::Reno, Variant::NewReno, Variant::Sack] {
            assert_eq!(Variant::from_protocol(v.name()), Some(v));
        }
        assert_eq!(Variant::from_protocol("tcp-cubic"), None);
    }
}
