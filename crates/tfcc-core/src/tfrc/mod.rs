//! TFRC, the TCP-Friendly Rate Control protocol: Widmer's receiver-based design (004 Ch. 3)
//! as sans-IO sender and receiver, with RFC 5348 where the thesis is silent.
//!
//! - [`TfrcSender`] paces packets at the allowed rate `X`, measures the RTT from echoed
//!   timestamps (004 Sec. 3.3), slowstarts, follows the equation once losses are reported,
//!   halves on missing feedback and modulates packet spacing by the RTT (ISM, Sec. 3.6.4);
//! - [`TfrcReceiver`] detects losses, groups them into loss events (by the sender's latest RTT
//!   sample in the thesis preset, 004 Sec. 3.4, by its smoothed RTT in `ns2` and `rfc5348`:
//!   [`config::LossEventRtt`]), keeps the loss history, seeds it after slowstart, measures the
//!   receive rate and reports once per RTT;
//! - [`TfrcConfig`] holds every constant; [`wire`] the App. A headers as bytes.
//!
//! # Where the equation is evaluated
//!
//! The thesis evaluates the equation at the receiver and reports `b_exp` (004 Sec. 3.2); RFC
//! 5348 reports `p` and the sender evaluates it. The result is the same rate: the receiver only
//! knows the RTT the sender put in the data header, so `b_exp = f(s, R_hdr, p)` is what the
//! sender computes from `p` with its own (half an RTT fresher) `R`. Reporting `p` keeps the
//! feedback the same for both presets and lets the sender apply `t_RTO`, `b` and the model from
//! one [`crate::equation::Equation`]. The sender never sees more than `p`, `X_recv` and the
//! echo, as in the thesis' feedback (App. A).
//!
//! # Rate rules (004 Sec. 3.5–3.6, RFC 5348 §4)
//!
//! - Init RTT: one packet per [`TfrcConfig::initial_interval`] until the first report.
//! - Slowstart (reports with `p = 0`): double once per RTT, bounded by the receive rate
//!   ([`config::SlowstartBound`]).
//! - Congestion control (`p > 0`): `X = max(X_calc, s/t_mbi)` (004 Sec. 3.5: the sender
//!   follows the receiver's expected rate), or `max(min(X_calc, 2·X_recv), s/t_mbi)` (RFC
//!   5348 §4.3, ns-2) with [`TfrcConfig::receive_bound`],
//!   with the thesis' increase limit of one packet per RTT per report when
//!   [`TfrcConfig::increase_limit`] is set (004 Eq. 3.7–3.8). A decrease is immediate (004
//!   Sec. 3.5.2). With [`TfrcConfig::smooth_increase`] (the thesis) each increase is spread
//!   over the packets that follow (Eq. 3.9–3.10); without it (RFC 5348, ns-2) it is taken when
//!   the report arrives.
//! - No feedback for `max(a·R, c·s/X)`: halve `X` (004 Eq. 3.12, RFC 5348 §4.4 simplified to
//!   halving `X` itself, as the thesis does), never below `s/t_mbi`; or, with
//!   [`TfrcConfig::nofeedback_rule`] `= "rfc5348"`, §4.4 as written (halving through
//!   `X_recv_set`, none while idle below the recovery rate `W_init/R`).
//!
//! # Application-limited senders (RFC 5348 §4.3, §4.4, §8.2; 004 is silent)
//!
//! The thesis' sender always has data. A media application has less most of the time:
//! [`crate::endpoint::Sender::offer`] gives the sender a send buffer, and it then knows, send by
//! send, whether it waited on the rate or on the data (§8.2.1). With
//! [`TfrcConfig::data_limited`] `= "rfc5348"` a report covering a data-limited interval keeps the
//! largest receive rate seen (`X_recv_set`, §4.3) instead of bounding the rate by twice what a
//! codec happened to send; the `rfc5348` preset ([`TfrcConfig::rfc5348`]) turns both rules on.

pub mod config;
pub mod receiver;
pub mod sender;
pub mod wire;

pub use config::{TfrcConfig, TfrcConfigError};
pub use receiver::TfrcReceiver;
pub use sender::TfrcSender;
pub use wire::{DataHeader, FeedbackHeader, Mode};
