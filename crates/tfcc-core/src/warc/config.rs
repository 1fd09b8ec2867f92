//! Every constant of WARC (003 Ch. 3) and of the rate-paced sender it shares with TEAR and
//! TFRCP, as fields with their sources. The defaults are Table 3.1's (s = 160, K = 3, N = 12)
//! on the thesis' ns-2 paths (1000-byte packets, RTTs of 10–300 ms).

use serde::Deserialize;

use crate::time::Dur;

/// What the fluid-based timeout does on a further loss in the timeout phase (003 Sec.
/// 3.2.2.3; spec 003 §3.4 flags the disagreement).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtoBackoff {
    /// The text: `W = 1/(u·2^C)`, `I += u·2^C`, so the first extra loss doubles the timeout as
    /// TCP's RTO back-off does. The default, being the TCP-like reading.
    #[default]
    Text,
    /// Fig. 3.3 literally: `2<<C` with `X<<Y = X·2^Y`, i.e. `u·2^(C+1)`.
    PseudoCode,
}

/// Which losses in the fluid timeout phase back it off (003 Sec. 3.2.2.3: "another variable C is
/// employed to record the times that packet losses occur during the phase. If another loss
/// occurs during the phase (C > 0), WARC will regard the loss as the second timeout event";
/// Fig. 3.3's `LossHandler` backs off on every call with `I > 0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtoLoss {
    /// Every loss event in the phase backs it off: the sentence read literally (and Fig. 3.3's
    /// `LossHandler`), a "loss" being a loss event (footnote 1: "the term 'event' is ignored
    /// in this work"). WARC's sender keeps sending at the averaged rate during the phase, so a
    /// flow at R packets per RTT meets about R times the losses in a phase that the TCP it
    /// emulates (one packet per RTO) would. Measured (warcaudit, 2026-11-26, as the default):
    /// E3.1 at 5 % loss WARC/TCP 0.020 (the thesis reports 0.8-1.1), the 1 % Bernoulli test
    /// 0.935 (Sec. 3.6's analysis, 2/√3 = 1.155), E3.5's rise 50.8 s (6.7 s with the default).
    Any,
    /// Only the loss of the emulated retransmission: the first packet judged after entering the
    /// phase or after each back-off stands for TCP's one packet per RTO; if it arrives, later
    /// losses in the phase are not back-offs. The default. The sentence's own purpose decides
    /// it: "To emulate the back-off mechanism in the TCP timeout mechanism, another variable C
    /// is employed [...]" (Sec. 3.2.2.3), and TCP backs its timer off when the one packet it
    /// sends in the timeout, the retransmission, is lost, not on losses of packets it does not
    /// send; the phase itself sets `W(t) = 1/u` to "emulate TCP only sending one packet before
    /// RTO seconds". Read literally against a sender that keeps its averaged rate, the
    /// sentence makes WARC back off about R times as often as TCP, which neither that purpose
    /// nor Sec. 3.5.1's results (WARC 0.8-1.1 of TCP under heavy loss, "the timeout mechanism
    /// [...] does prevent WARC from using more bandwidth than TCP") describe. Decided by the
    /// lead after the warcaudit measurements above; the literal reading stays selectable.
    #[default]
    Retransmission,
}

/// How a loss enters the window history (spec 003 §3.5, "double insertion").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossInsertion {
    /// One value per round: the halved window is the value of the round in which the loss
    /// happened (no +1 that round), so `Q_w` holds exactly `W(t)` of Eq. 3.1 per round. The
    /// default: Eq. 3.1 and the fairness proof (Eqs. 3.4–3.6) count one window per RTT.
    #[default]
    Once,
    /// Fig. 3.3 literally: `LossHandler` enqueues the halved window and `UpdateW` enqueues
    /// it again (+1) at the round's end.
    Twice,
}

/// Which loss events enter `Q_x`, the inter-loss times History-Reset reads (Eq. 3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HrLosses {
    /// Every loss event, in the fluid timeout phase too. The text defines the inter-loss times
    /// by losses alone: `R̄_TCP(N)` is "the average TCP rate spanning over the latest N packet
    /// losses" and `X(-j)` "the period between the j-th and (j+1)-th last losses" (Sec.
    /// 3.2.2.1, Eq. 3.3), and HR is to "respond to the abrupt change right after a fixed number
    /// of loss events" (ibid.; Eq. 3.9: N losses). The default, because it is also the only
    /// reading that fits the thesis' own E3.5 timeline (Sec. 3.5.3: HR "invoked at 603th
    /// second", rate "immediately" at the TCP rate): measured in `003-e35-onoff.toml`
    /// (h-warc10), the first loss after the fall reaches the receiver at 600.17 s and closes
    /// a 172-round interval of the 6-Mb/s phase; while it is among the last N, `S(N)` exceeds
    /// `s` and HistoryReset(S(N)) removes nothing. Loss events then come every round, but the
    /// emulated window reaches the fluid timeout at the seventh (601.09 s), and each
    /// timeout phase lasts u = ⌈RTO/RTT⌉ = 7 rounds (1-s minimum RTO, 0.16-s RTT). Counting
    /// only normal-phase losses, 12 intervals take 6 + 6 × 7 rounds and the reset takes
    /// effect at 607.9 s (Eq. 3.2 already holds from 603.4 s, with S(N) = 207 > s); counting
    /// every loss event, at 601.3 s (118 windows kept, 88.6 → 53.6 packets per RTT) and fully
    /// at 602.3 s (15 kept, 10.9).
    #[default]
    Every,
    /// Fig. 3.3 literally: `LossHandler` updates `Q_x` and `t'` only in the normal phase
    /// (`I = 0`); a loss in the timeout phase only backs the phase off.
    NormalPhase,
}

/// What the one-RTT reduction takes 7/8 of (003 Sec. 3.2.2.2 and Fig. 3.3 disagree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReductionBasis {
    /// Fig. 3.3: `UpdateW` sends `Ack(R × 7/8)`, `R` the mean of the last `s` emulated windows
    /// (Eq. 3.1). The default: the pseudo-code is the only place that states the whole
    /// per-round procedure, and Sec. 3.2.2's paragraph on `UpdateW` repeats it ("the rate would
    /// be discounted by 1/8 if a loss has occurred").
    #[default]
    Averaged,
    /// Sec. 3.2.2.2's text: "the receiver of WARC will acknowledge the sender to *temporarily*
    /// reduce the transmission rate used in the next round to 7/8 of the received rate", the
    /// received rate being the data packets the receiver judged received in the round that
    /// just ended (packets per RTT, floored at `min_window`), as the self-clocking of \[BBF01\]
    /// the paragraph cites bounds TFRC by the receive rate.
    Received,
}

/// WARC's receiver-side estimator (003 Sec. 3.2, Table 3.1).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WarcConfig {
    /// `s`, emulated windows averaged (Eq. 3.1). 160 = 5.07 × 31.62 (Sec. 3.3.2): smoother than
    /// GAIMD(1/8) up to the largest window most TCP flows reach.
    pub s: usize,
    /// `K` of the History-Reset trigger, Eq. 3.2 (Table 3.1: 3).
    pub k: f64,
    /// `N`, the inter-loss times in Eq. 3.3 (Table 3.1: 12). (3, 12) keeps the false-trigger
    /// probability near 1e-3 under exponential losses (Sec. 3.4.4).
    pub n: usize,
    /// History-Reset on (Sec. 3.2.2.1); off is the thesis' "WARC w/o HR".
    pub history_reset: bool,
    /// Check HR only once `N` inter-loss times are known. Fig. 3.3 divides by `Len(Q_x)` and so
    /// may fire after one loss (probability 1 − e^(−1/3) ≈ 0.28 then); the false-positive
    /// analysis assumes N samples. Default on (spec 003 §3.5's recommendation).
    pub hr_requires_full: bool,
    /// Which loss events History-Reset's inter-loss times count; see [`HrLosses`].
    pub hr_losses: HrLosses,
    /// The one-RTT reduction on (Sec. 3.2.2.2); off is "WARC w/o one-RTT reduction". Only a
    /// loss that halves the emulated window triggers it: Fig. 3.3 sets `HasLoss` in the
    /// `w >= 3` branch alone, so a loss that enters the fluid timeout (or backs it off) is not
    /// followed by a reduced report. Sec. 3.2.2.2's "When detecting a loss, the receiver of
    /// WARC will acknowledge the sender to temporarily reduce the transmission rate" names no
    /// exception; the thesis states both, and this follows the pseudo-code.
    pub one_rtt_reduction: bool,
    /// The reduction factor: the report after a loss is `reduction` times the rate chosen by
    /// `reduction_basis`, 7/8 (Sec. 3.2.2.2, Fig. 3.3).
    pub reduction: f64,
    /// What the reduction is taken of: Fig. 3.3's averaged rate `R` (the default) or the text's
    /// received rate; see [`ReductionBasis`].
    pub reduction_basis: ReductionBasis,
    /// The fluid-based timeout on (Sec. 3.2.2.3); off is "WARC w/o TO" (Fig. 3.11).
    pub fluid_timeout: bool,
    /// A loss with `w` below this is a timeout event (Sec. 3.2.2.3: "W < 3"). Above 0 while
    /// [`WarcConfig::fluid_timeout`] is on: the emulated window is never 0 (at least `1/u`
    /// even in the phase), so 0 would make no loss a timeout event, the same run as
    /// `fluid_timeout = false` (measured: identical summaries on a 10 % loss path) under a
    /// name that says the timeout is on.
    pub timeout_window: f64,
    /// Cap on the back-off counter `C` in the timeout phase (Fig. 3.3: 6), at most 16. 0 is
    /// defined: no back-off, so each further loss in the phase (as [`WarcConfig::fto_loss`]
    /// counts them) sets `W = 1/u` again and extends the phase by `u` rounds, as a TCP whose
    /// RTO never doubles; with [`FtoBackoff::PseudoCode`] `2<<0` makes that `1/(2u)` and
    /// `2u`, the text reading's `C = 1`.
    pub max_backoff: u32,
    /// Back-off reading; see [`FtoBackoff`].
    pub fto_backoff: FtoBackoff,
    /// Which losses back off the timeout phase; see [`FtoLoss`].
    pub fto_loss: FtoLoss,
    /// At most one back-off of the fluid timeout per round. 003 Sec. 3.2.2.3 backs the phase
    /// off "to emulate the back-off mechanism in the TCP timeout mechanism", and that TCP sends
    /// one packet per backed-off RTO, `u·2^C ≥ 1` rounds apart: it cannot lose two
    /// retransmissions in one round. The thesis does not discuss many losses judged at once; a
    /// link outage produces them: the gap of every packet sent through it is judged when the
    /// link returns, one loss event per RTT of send time. After a 9 s outage on the 692 kb/s,
    /// limit-2 dumbbell (`tests/outage.rs`) 78 loss events were judged in one round: five
    /// halved the emulated window from 82.75, the sixth entered the phase and the next 71 each
    /// backed it off (a packet got through before the last), to `C` = 6 and `I` = 8574 rounds
    /// (about 1000 s at the 0.117 s RTT) at `w` = 1/128, one packet per 15.9 s. Off is that
    /// reading.
    pub fto_one_backoff_per_round: bool,
    /// Grow the emulated window in a silent round too: one in which a data packet was due at
    /// the rate last reported and none arrived (see `RoundReceiver`). 003 Sec. 3.2.1 grows it
    /// "by one per RTT as TCP does" when "the WARC receiver does not encounter losses", and
    /// Fig. 3.3's `UpdateW` "increases w by one to emulate TCP when no packet loss is
    /// detected"; neither names rounds in which nothing arrives. TCP's additive increase is
    /// paid for by the ACKs of the window: without them its window does not grow. A silent
    /// round is one of those (a dead link, a stalled path), so by default the window holds
    /// there (the round still enters `Q_w`, and the fluid timeout still counts down); a round
    /// without an arrival because the sender paces slower than a packet per round is not
    /// silent and grows as before. On is the reading before this field (every round grows):
    /// during a 9 s outage of the forward link (the reverse one up, `tests/outage.rs`, limit
    /// 2) the window grew from 10 to 82.75 with no packet across, and the reports took the
    /// sender from 680 kb/s to 2.41 Mb/s into the dead 692 kb/s link.
    pub grow_in_silent_rounds: bool,
    /// Loss insertion reading; see [`LossInsertion`].
    pub loss_insertion: LossInsertion,
    /// Emulated window at the start, packets. The thesis does not say; 2 is ns-2's TCP
    /// `windowInit_`, and WARC emulates no slow start (spec 003 §3.5).
    pub initial_window: f64,
    /// Floor of a halved window (without FTO a window can otherwise halve towards zero).
    /// 1 packet, TCP's smallest window.
    pub min_window: f64,
    /// Cap on the emulated window `w`, packets per RTT: the maximum window of the TCP that WARC
    /// emulates, so it should equal the competing TCP's (`TcpConfig::max_window`), and the
    /// default is the same 10 000 packets, which never binds. The thesis' set-up uses 200, and
    /// every 003 scenario sets it (`params = { max_window = 200 }`): "For the simulation, we use packets that
    /// were 1,000 bytes long and a maximum window size of 200 packets" (003 Sec. 2.4; Sec. 5 of
    /// the spec, "maximum cwnd 200", for Ch. 3 and 4 alike). Ch. 3 does not state the cap for
    /// WARC itself, but it defines what is emulated: `W(t)` is "the number of packets
    /// transmitted by a TCP sender, i.e. its CWND, in the t-th round" (Sec. 3.2.1, Eq. 3.1) and
    /// the receiver "estimates the CWND which may be used now by a TCP flow". The set-up's TCP
    /// (ns-2 `window_ 200`) never sends more than 200 packets in a round, and ns-2 halves
    /// `min(cwnd_, window_)` at a loss (`slowdown`), so capping `w` at 200 gives the same
    /// window series as that TCP's. Without the cap WARC would emulate a TCP the set-up does
    /// not have. `inf` removes it. A library default of 200 would cap a WARC media flow at
    /// 16 Mb/s on a 100 ms path of 1000-byte packets, as ns-2's default `window_ 20` would TCP.
    pub max_window: f64,
}

impl Default for WarcConfig {
    fn default() -> Self {
        WarcConfig {
            s: 160,                                    // Table 3.1
            k: 3.0,                                    // Table 3.1
            n: 12,                                     // Table 3.1
            history_reset: true,                       // Sec. 3.2.2.1
            hr_requires_full: true,                    // spec 003 §3.5
            hr_losses: HrLosses::Every,                // Sec. 3.2.2.1, Eq. 3.3
            one_rtt_reduction: true,                   // Sec. 3.2.2.2
            reduction: 7.0 / 8.0,                      // Fig. 3.3
            reduction_basis: ReductionBasis::Averaged, // Fig. 3.3 (see ReductionBasis)
            fluid_timeout: true,                       // Sec. 3.2.2.3
            timeout_window: 3.0,                       // Sec. 3.2.2.3
            max_backoff: 6,                            // Fig. 3.3
            fto_backoff: FtoBackoff::Text,
            fto_loss: FtoLoss::Retransmission, // Sec. 3.2.2.3's purpose (see FtoLoss)
            fto_one_backoff_per_round: true,
            grow_in_silent_rounds: false, // TCP grows with ACKs (see the field)
            loss_insertion: LossInsertion::Once,
            initial_window: 2.0, // ns-2 windowInit_
            min_window: 1.0,
            max_window: 10_000.0, // as TcpConfig::max_window; 003 Sec. 2.4's 200 is set per scenario
        }
    }
}

impl WarcConfig {
    /// Checks every field; the message is `field: why`.
    pub fn validate(&self) -> Result<(), String> {
        if self.s == 0 || self.s > 1_000_000 {
            return Err(format!("s: must be in 1..=1000000, got {}", self.s));
        }
        if self.n == 0 || self.n > 10_000 {
            return Err(format!("n: must be in 1..=10000, got {}", self.n));
        }
        if !(self.k.is_finite() && self.k > 1.0) {
            return Err(format!("k: must be a number above 1, got {}", self.k));
        }
        if !(self.reduction > 0.0 && self.reduction <= 1.0) {
            return Err(format!(
                "reduction: must lie in (0, 1], got {}",
                self.reduction
            ));
        }
        if !(self.timeout_window.is_finite() && self.timeout_window >= 0.0) {
            return Err(format!(
                "timeout_window: must be a non-negative number, got {}",
                self.timeout_window
            ));
        }
        if self.fluid_timeout && self.timeout_window == 0.0 {
            return Err(
                "timeout_window: must be above 0 with fluid_timeout on (a loss while \
                 the emulated window is below it is a timeout event, Sec. 3.2.2.3: 3), got 0, \
                 which makes no loss one; for WARC without the fluid timeout set \
                 fluid_timeout = false"
                    .into(),
            );
        }
        if self.max_backoff > 16 {
            return Err(format!("max_backoff: at most 16, got {}", self.max_backoff));
        }
        if !(self.initial_window.is_finite() && self.initial_window > 0.0) {
            return Err(format!(
                "initial_window: must be positive, got {}",
                self.initial_window
            ));
        }
        if !(self.min_window.is_finite() && self.min_window > 0.0) {
            return Err(format!(
                "min_window: must be positive, got {}",
                self.min_window
            ));
        }
        if !(self.max_window >= self.min_window && self.max_window >= self.initial_window) {
            return Err(format!(
                "max_window: must be at least min_window and initial_window, got {}",
                self.max_window
            ));
        }
        Ok(())
    }
}

/// The rate-paced sender of WARC, TEAR and TFRCP: it sends at the rate its receiver reports,
/// in packets per RTT (003 Sec. 3.2.1: "The sender sends data packets at the rate periodically
/// assigned by the receiver", "packet/RTT is used as the unit of rate"), one packet every
/// SRTT/R.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RateSenderConfig {
    /// Bytes of a data packet on the wire (003 §5: 1000-byte packets).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub packet_size: u32,
    /// Bytes of a feedback packet (a TCP ACK's 40).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub feedback_size: u32,
    /// Send interval before the first RTT sample: one packet per second, RFC 5348 §4.2's
    /// starting rate (the theses do not say how these schemes start).
    pub initial_interval: Dur,
    /// No report for `nofeedback_rtts` × SRTT (at least 2 packet intervals) halves the rate,
    /// RFC 5348 §4.4's no-feedback timer with its 4 RTTs; the thesis is silent, and without it a
    /// sender whose reports are all lost would never slow down.
    pub nofeedback_rtts: f64,
    /// The slowest sending: one packet per this interval (RFC 5348 §4.3, `t_mbi` = 64 s).
    pub max_interval: Dur,
    /// SRTT/RTO estimation (TCP's, 003 Sec. 3.2.1: "RTO from the usual TCP algorithm"): the
    /// shared estimator with ns-2's clamps (200 ms minimum RTO, 3 s initial) but unquantised
    /// samples ([`crate::rtt::TcpRttMode::Rfc6298`]). The SRTT paces the sender and times the
    /// receiver's rounds; ns-2's 10 ms ticks would turn a 44 ms RTT into 40 ms rounds, and
    /// the emulated window would grow 10 % faster than a real TCP's.
    pub rtt: crate::rtt::TcpRttConfig,
    /// The smallest RTT sample taken: `now − echo − hold` of a report whose holding delay covers
    /// the whole round trip is 0 (RFC 5348 §4.3's `R_sample <= 0`), which the unquantised
    /// estimator would take as a 1 ns SRTT and pace one packet per `1 ns / R`. Such a sample is
    /// raised to this. The theses are silent; default 1 µs, [`crate::rtt::DEFAULT_MIN_RTT_SAMPLE`]
    /// (as TFRC's `min_rtt_sample`). Must be > 0.
    pub min_rtt_sample: Dur,
}

impl Default for RateSenderConfig {
    fn default() -> Self {
        RateSenderConfig {
            packet_size: 1000,                   // 003 §5
            feedback_size: 40,                   // a TCP ACK
            initial_interval: Dur::from_secs(1), // RFC 5348 §4.2
            nofeedback_rtts: 4.0,                // RFC 5348 §4.4
            max_interval: Dur::from_secs(64),    // RFC 5348 t_mbi
            rtt: crate::rtt::TcpRttConfig {
                mode: crate::rtt::TcpRttMode::Rfc6298,
                ..crate::rtt::TcpRttConfig::default() // ns-2's clamps
            },
            min_rtt_sample: crate::rtt::DEFAULT_MIN_RTT_SAMPLE, // theses silent; see rtt.rs
        }
    }
}

impl RateSenderConfig {
    /// Checks every field; the message is `field: why`.
    pub fn validate(&self) -> Result<(), String> {
        if self.packet_size < super::wire::DATA_LEN as u32 {
            return Err(format!(
                "packet_size: must hold the {}-byte header, got {}",
                super::wire::DATA_LEN,
                self.packet_size
            ));
        }
        if self.feedback_size == 0 {
            return Err("feedback_size: must be positive".into());
        }
        if self.min_rtt_sample.is_zero() {
            return Err("min_rtt_sample: must be positive".into());
        }
        if self.initial_interval.is_zero() || self.max_interval.is_zero() {
            return Err("initial_interval: intervals must be positive".into());
        }
        if !(self.nofeedback_rtts.is_finite() && self.nofeedback_rtts >= 1.0) {
            return Err(format!(
                "nofeedback_rtts: must be at least 1, got {}",
                self.nofeedback_rtts
            ));
        }
        self.rtt.validate().map_err(|e| format!("rtt: {e}"))
    }
}
