//! ns-2-compatible TCP baselines: Reno, NewReno and SACK senders with their sinks.
//!
//! Every thesis compares its protocol against ns-2's TCP agents (000 §3.1, 002 Ch. 4 and 003 §5
//! use `Agent/TCP/Sack1`; 004 uses Reno and SACK), so these are behavioural models of ns-2.35's
//! one-way agents rather than of a kernel TCP: segment-numbered (not byte-numbered), a bulk
//! sender by default (ns-2 `Application/FTP`), a modelled SYN, one RTT sample per window with a
//! 10 ms clock, and the recovery rules of `tcp-reno.cc`, `tcp-newreno.cc` and `tcp-sack1.cc`.
//!
//! - [`config`]: [`TcpConfig`], every ns-2 default as a field;
//! - [`sender`]: [`TcpSender`], the three recovery variants behind one type;
//! - [`sink`]: [`TcpSink`], `Agent/TCPSink`, `TCPSink/Sack1` and their delayed-ACK forms;
//! - `scoreboard` (private): the Sack1 sender's record of SACKed segments;
//! - [`ttfwc`]: TTFWC (000), a congestion control the sender can run instead of Reno's
//!   increase and decrease ([`TcpConfig::congestion`]);
//! - [`cubic`]: CUBIC (RFC 9438) as a congestion control, for 000's CUBIC comparisons;
//! - [`friendly`]: 003's window-based TCP-friendly schemes (GAIMD, IIAD, SQRT, SIMD, AIAD/H)
//!   as congestion controls;
//! - [`ptcp`]: predictable-throughput TCP (001), the target-driven increase `cwnd += k/cwnd`;
//!   [`path`] and [`imtcp`]: where its available bandwidth and capacity come from (an oracle the
//!   driver feeds, or inline measurement from paced probe streams);
//! - [`wire`]: the data and ACK headers and their byte encodings.
//!
//! Build both ends from one [`TcpConfig`], so the sink sends SACK blocks exactly when the sender
//! runs [`Variant::Sack`]:
//!
//! ```
//! use tfcc_core::tcp::{TcpConfig, TcpSender, TcpSink, Variant};
//! let cfg = TcpConfig::with_variant(Variant::NewReno);
//! let (sender, sink) = (TcpSender::new(cfg.clone()), TcpSink::new(&cfg));
//! # let _ = (sender, sink);
//! ```

pub mod aggregate;
pub mod config;
pub mod cubic;
pub mod friendly;
pub mod imtcp;
pub mod path;
pub mod ptcp;
mod scoreboard;
pub mod sender;
pub mod sink;
pub mod ttfwc;
pub mod wire;

pub use config::{Congestion, TcpConfig, Variant};
pub use cubic::{Cubic, CubicConfig};
pub use friendly::{AiadhConfig, BinomialConfig, Friendly, GaimdConfig, Rule, SimdConfig};
pub use path::{PathEstimator, PathOracle, PathSource};
pub use ptcp::{
    AfterTimeout, EstimatorKind, GroupKMin, GroupShare, PathEstimate, Ptcp, PtcpConfig,
};
pub use sender::TcpSender;
pub use sink::TcpSink;
pub use ttfwc::{AliUpdate, CountUnit, EpsBase, Ttfwc, TtfwcConfig};
pub use wire::{SackBlock, TcpAck, TcpData, WireError, MAX_SACK_BLOCKS};
