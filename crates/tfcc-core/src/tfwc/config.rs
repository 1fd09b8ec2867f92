//! Every constant of TFWC (002), as a field with its source.
//!
//! Where the thesis is silent the spec's reading of Choi's code decides ([X] in spec 002) and
//! the field says so; where thesis and code disagree the thesis wins and the code's value is
//! named, so either can be configured.

use serde::Deserialize;

use crate::time::Dur;

/// How the real-valued window `1/f(p)` becomes whole packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// To the nearest integer, at least 1: 002 App. A.2.2 rounds W(0.05) = 3.69 to 4, and Vic
    /// computes `(int)(W + 0.5)`.
    #[default]
    Nearest,
    /// Down, at least 1: ns-2's `Agent/TFWC` (`window = (int)W`).
    Floor,
}

/// TFWC sender and receiver parameters. `Default` is the thesis' TFWC.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TfwcConfig {
    /// Bytes of a data packet on the wire. 002 Ch. 4 simulates 1000-byte packets.
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub packet_size: u32,
    /// Bytes of an ACK on the wire: ns-2's TFWC sink sends 40-byte ACKs (spec 002 §2.3 [X]).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub ack_size: u32,
    /// The 3 numbers below the Ack Vector head that are not yet judged, TCP's 3-DupAck rule
    /// (002 Sec. 3.2.1). The sender's AoA is the number below the margin (ns-2's `H − 4`).
    pub margin: u64,
    /// Closed loss intervals in the average, n = 8 with TFRC's weights and
    /// `ALI = max(I_new, I)` (002 Sec. 3.2.2; `loss_history::AliConfig::tfwc`).
    pub history_size: usize,
    /// Window before the first loss, in packets: 1, growing by one per ACK (slow start,
    /// 002 Sec. 3.2.3; Choi's code starts at 1, spec 002 §2.7 [X]).
    pub initial_window: u32,
    /// Upper bound on the window in packets, the equation's `w_max` (002 Eq. 2.2). The thesis
    /// gives no value; the default is large enough not to bind on any dumbbell of 002 Ch. 4.
    pub max_window: u32,
    /// Switch to timer-paced sending when the window falls below [`Self::rate_threshold`]
    /// (002 Sec. 3.2.6, the hybrid mode). Off gives the window-only TFWC of Fig. 3.5.
    pub hybrid: bool,
    /// The hybrid threshold in packets: "less than two packets" (002 Sec. 3.2.6). Choi's code
    /// used 2.5 (ns-2 HEAD) and 2.0 (Vic).
    pub rate_threshold: f64,
    /// Window rounding; see [`Rounding`].
    pub rounding: Rounding,
    /// Multiplies the rate-mode inter-packet interval. 1 in the thesis and Vic; ns-2 HEAD used
    /// 0.8 because TFWC "got less throughput than TCP" (spec 002 §2.8 [X]).
    pub rate_mode_scale: f64,
    /// cwnd jitter (002 Sec. 3.2.7): on each Ack Vector inflate the window by one packet with
    /// [`Self::jitter_probability`], and at least once per RTT.
    pub jitter: bool,
    /// The "force inflater": inflate at the end of an RTT in which no draw did (002 Sec. 3.2.7,
    /// "at least once per RTT"). Choi's ns-2 code runs it only under the opposite condition
    /// (spec 002 §2.9 [X]); false leaves the 10 % draws alone.
    pub jitter_force: bool,
    /// 10 % per Ack Vector (002 Sec. 3.2.7).
    pub jitter_probability: f64,
    /// Jitter is off above this loss event rate: 25 % (002 Sec. 3.2.7).
    pub jitter_max_p: f64,
    /// Jitter is off when the ALI moved by more than this many packets within the RTT: 10
    /// (002 Sec. 3.2.7, "corresponds to a 10 % loss-rate variation").
    pub jitter_max_ali_change: f64,
    /// Double the timer on each window-mode expiry (002 Sec. 3.2.5). ns-2 HEAD instead resets
    /// it to `2·SRTT` (spec 002 §2.5 [X]); false selects that.
    pub timer_backoff: bool,
    /// RTO before the first RTT sample: 3 s (RFC 2988, as Choi's code; spec 002 §2.5 [X]).
    pub initial_rto: Dur,
    /// Lower bound on the RTO: 0.2 s (Vic, following Linux; spec 002 §2.5 [X]).
    pub min_rto: Dur,
    /// Upper bound on the RTO: 60 s (RFC 2988, Vic).
    pub max_rto: Dur,
    /// Seed of the jitter draws. A driver derives it from its own per-flow random stream.
    pub seed: u64,
}

impl Default for TfwcConfig {
    fn default() -> Self {
        TfwcConfig {
            packet_size: 1000,
            ack_size: 40,
            margin: 3,
            history_size: 8,
            initial_window: 1,
            max_window: 100_000,
            hybrid: true,
            rate_threshold: 2.0,
            rounding: Rounding::Nearest,
            rate_mode_scale: 1.0,
            jitter: true,
            jitter_force: true,
            jitter_probability: 0.1,
            jitter_max_p: 0.25,
            jitter_max_ali_change: 10.0,
            timer_backoff: true,
            initial_rto: Dur::from_secs(3),
            min_rto: Dur::from_millis(200),
            max_rto: Dur::from_secs(60),
            seed: 0,
        }
    }
}

impl TfwcConfig {
    /// Checks every field against its domain; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |f: &str, why: &str| Err(format!("{f}: {why}"));
        if self.packet_size == 0 {
            return bad("packet_size", "must be positive");
        }
        if self.ack_size == 0 {
            return bad("ack_size", "must be positive");
        }
        if self.history_size == 0 || self.history_size > crate::loss_history::MAX_HISTORY {
            return bad("history_size", "must be between 1 and 1024");
        }
        if self.initial_window == 0 || self.max_window < self.initial_window {
            return bad(
                "initial_window",
                "must be at least 1 and at most max_window",
            );
        }
        if !(self.rate_threshold >= 0.0 && self.rate_threshold.is_finite()) {
            return bad("rate_threshold", "must be a non-negative number");
        }
        if !(self.rate_mode_scale > 0.0 && self.rate_mode_scale.is_finite()) {
            return bad("rate_mode_scale", "must be positive");
        }
        if !(0.0..=1.0).contains(&self.jitter_probability) {
            return bad("jitter_probability", "must be in [0, 1]");
        }
        if self.min_rto > self.max_rto || self.initial_rto.is_zero() {
            return bad("min_rto", "must not exceed max_rto (and initial_rto > 0)");
        }
        if self.margin > 64 {
            return bad("margin", "must be at most 64");
        }
        Ok(())
    }
}
