//! WARC, Window-Averaging Rate Control (003 Ch. 3), and the receiver-driven rate machinery it
//! shares with TEAR and TFRCP.
//!
//! The receiver detects loss events and emulates a TCP window once per RTT; the sending rate is
//! the mean of the last `s` emulated windows (Eq. 3.1), with History-Reset, the one-RTT
//! reduction and the fluid-based timeout as complements (Sec. 3.2.2). The sender only paces at
//! the reported rate.
//!
//! - [`config`]: [`WarcConfig`] (Table 3.1's s = 160, K = 3, N = 12 and the variants) and
//!   [`RateSenderConfig`];
//! - [`emulation`]: [`Warc`], the estimator of Fig. 3.3, free of packets and clocks;
//! - [`receiver`]: [`RoundReceiver`], rounds and reports around any [`RoundEstimator`];
//! - [`sender`]: [`RateSender`], the paced sender;
//! - [`wire`]: the headers and their byte encodings.
//! - [`analysis`]: the closed forms of Sec. 3.4 and App. 2 (aggressiveness, responsiveness,
//!   the History-Reset false-positive probability).

pub mod analysis;
pub mod config;
pub mod emulation;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{
    FtoBackoff, FtoLoss, HrLosses, LossInsertion, RateSenderConfig, ReductionBasis, WarcConfig,
};
pub use emulation::Warc;
pub use receiver::{AnyRateEstimator, RateReceiver, RoundEstimator, RoundReceiver, WarcReceiver};
pub use sender::RateSender;
pub use wire::{DataHeader, DecodeError, FeedbackHeader, RateScheme};

impl RateSenderConfig {
    /// Field names, so a scenario's flat `params` table can be split between the sender and
    /// the receiver's estimator.
    pub const FIELDS: &'static [&'static str] = &[
        "packet_size",
        "feedback_size",
        "initial_interval",
        "nofeedback_rtts",
        "max_interval",
        "rtt",
    ];
}

#[cfg(test)]
mod tests;
