//! Every constant of TFWC (002), as a field with its source.
//!
//! Where the thesis is silent the spec's reading of Choi's code decides (\[X\] in spec 002) and
//! the field says so; where thesis and code disagree the thesis wins and the code's value is
//! named, so either can be configured.

use serde::{Deserialize, Serialize};

use crate::time::Dur;

/// How the real-valued window `1/f(p)` becomes whole packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rounding {
    /// To the nearest integer, at least 1: 002 App. A.2.2 rounds W(0.05) = 3.69 to 4, and Vic
    /// computes `(int)(W + 0.5)`.
    #[default]
    Nearest,
    /// Down: Choi's ns-2.34 `Agent/TFWC` (`window = (int) float_win_` in `ctrl_win`), which
    /// is what ran the thesis' Ch. 3-4 simulations. The floor under the result is
    /// [`TfwcConfig::min_window`] (the ns-2 code has none: below W = 1 its window is 0).
    Floor,
}

/// How the first loss seeds the loss history (002 Sec. 3.3.1, Algorithm 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FirstLossSeed {
    /// Algorithm 2 as printed: `p` is the first point of the grid 10⁻⁵, 2·10⁻⁵, ... whose
    /// equation window is *below* the halved window ("if win < cwnd then break"), and the seed
    /// interval is `1/p`. So the seeded window lies just under the halved one: rounded to the
    /// nearest integer it is the halved window, truncated it is one packet less; above a halved
    /// window of about 387 packets the grid's first point already qualifies and the seed is
    /// 100 000 packets. The grid's k-th point is taken as `k·10⁻⁵` exactly, without the rounding
    /// a float loop accumulates.
    #[default]
    Grid,
    /// Choi's ns-2.34 `pseudo_p` + `pseudo_history`: Algorithm 2's grid, and the interval
    /// stored as an integer, `history_[1] = (int)(1/p)`, which lowers the seeded window a little
    /// further.
    GridTruncated,
    /// The equation's exact inverse at the halved window (spec 002 §2.7 \[I\]: Algorithm 2
    /// "without the grid"); the seeded window is the halved one up to a few ulps.
    Exact,
}

/// The loss-interval weights of the average loss interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryWeights {
    /// TFRC's (RFC 3448 §5.4): 1 for the newer half, then falling linearly; at n = 8
    /// 1, 1, 1, 1, .8, .6, .4, .2. 002 Sec. 3.2.2 uses "the same ALI mechanism that TFRC has
    /// used" with the last 8 intervals.
    Tfrc,
    /// Choi's ns-2.34 code (`gen_weight` without `SHORT_HISTORY`, `HSZ = 16`): 1 for i < 4,
    /// then `2/(i − 1)`: .667, .5, .4, ..., .143 at n = 16 (spec 002 §2.2 \[X\]).
    #[default]
    Choi,
}

/// How the cwnd jitter decides to inflate (002 Sec. 3.3.3 against Choi's ns-2.34 code).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JitterRule {
    /// The thesis' text: +1 with [`TfwcConfig::jitter_probability`] on each Ack Vector, a
    /// forced +1 at the end of an RTT without one ([`TfwcConfig::jitter_force`]), and no
    /// jitter at all while p exceeds [`TfwcConfig::jitter_max_p`] or the ALI moved by more
    /// than [`TfwcConfig::jitter_max_ali_change`] within the RTT.
    Thesis,
    /// Choi's ns-2.34 `smoother()`: the +1 draw with [`TfwcConfig::jitter_probability`] on
    /// every Ack Vector that is not the first of a new RTT, whatever p; on the first Ack
    /// Vector of a new RTT (the last send more than SRTT after the RTT's mark) the window is
    /// not recomputed but kept at the previous one, and `force_inflate` adds 1 only if
    /// nothing was inflated in the RTT, at least 4 Ack Vectors were not, and the ALI moved by
    /// more than [`TfwcConfig::jitter_max_ali_change`] over more than 4 Ack Vectors since the
    /// last forced inflation: the opposite of the thesis' disabling rule (spec 002 §2.9 \[X\]).
    #[default]
    Ns2,
}

/// How the losses of packets the window-mode timer let out during a stall (002 Sec. 3.2.5,
/// Algorithm 1: an expiry sends a new packet; the stall lasts until the next Ack Vector) form
/// loss events. 002 is silent: Sec. 3.2.2 takes "the same ALI mechanism that TFRC has used",
/// whose rule (a loss more than one RTT after the event's first starts a new event, spec 002
/// §2.2) assumes feedback within about an RTT, and nothing about a timer that fires while
/// none comes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StallLosses {
    /// A lost packet sent during a stall joins the current loss event if that event began
    /// with a packet sent after the last Ack Vector before the stall: no feedback reached the
    /// sender between the two, so it cannot have reacted to the first, which is what the
    /// one-RTT rule stands for. The expiries of one stall are the retransmission timeouts of
    /// one TCP stall, and the equation the window comes from (002 Eq. 3.1, PFTK's) counts a
    /// whole sequence of backed-off timeouts as one loss indication (its `t_RTO` term carries
    /// the back-off); RFC 5681 §3.1 likewise keeps ssthresh on a second timeout of the same
    /// segment. So a link outage is at most two loss events: the window in flight when it
    /// began, and the expiries' packets. In rate mode, where no timer expires, the stall
    /// begins with the first packet sent after RFC 5348's no-feedback interval,
    /// `max(4·R, 2·s/X)`, without an Ack Vector: an outage is then the few events of that
    /// interval and one more. The default, in both presets.
    #[default]
    OneEvent,
    /// The one-SRTT rule alone, as Choi's ns-2.34 `loss_history()` applies it: the expiries
    /// come every 2·SRTT (or further apart, doubling), so every packet they let out into an
    /// outage is its own loss event. After a 9 s outage on the 692 kb/s, limit-2 dumbbell
    /// (`tests/outage.rs`) the 42 lost expiry packets filled the history, `p` reached 1, and
    /// the rate mode sent one packet per 8 s.
    PerSrtt,
}

/// The sender's RTT estimator and window-mode RTO. 002 prints no formulas (Sec. 3.2.5 points to
/// RFC 2988 and to TFRC's `t_RTO = 4·RTT` inside the equation), so the choice is ours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RttEstimator {
    /// Choi's ns-2.34 `update_rtt()`: first sample `SRTT = R`, `RTTVAR = R/2`; then
    /// `SRTT = 0.9·SRTT + 0.1·R` (`df_ = 0.9`, "by RFC 5348"), `RTTVAR += 0.25·(|SRTT − R| −
    /// RTTVAR)` with the new SRTT, and `RTO = SRTT + max(10 ms, 4·RTTVAR)`; the rate mode's
    /// `t0` is ns-2 TCP's estimator on 0.1 s ticks (`tcp_tick_`), 6 s before any sample.
    #[default]
    Ns2,
    /// RFC 6298 (gains 1/8 and 1/4, `G` = 10 ms), the same estimator for `t0`.
    Rfc6298,
}

/// What the packet carries that a sender polls while its offered send buffer
/// ([`crate::endpoint::Sender::offer`]) holds less than a full payload (`packet_size −
/// header_size`): a frame's tail. A bulk source (never offered) always has a full payload, so
/// only application-limited flows read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TailPacket {
    /// The header and what is left, so that [`crate::packet::Packet::size`] is the datagram
    /// the application sends, as TFRC's sender does. Vic, the code 002 Ch. 6 ran (the only
    /// application-limited TFWC of the thesis), packetises each frame into RTP packets:
    /// "the actual packet sizes are nearly 1000 bytes, where the last packet on every frame
    /// appears to be a lot smaller" (002 Sec. 5.1, Fig. 5.5; spec 002 §2.10). Choi's ns-2.34
    /// `Agent/TFWC` has no application interface at all (its `send` command starts a flow
    /// that always has data, and `send_more` puts `pktSize_` on every packet), so no figure
    /// of 002 shows an application-limited flow sending whole packets. The default, in every
    /// preset.
    #[default]
    Short,
    /// A whole `packet_size` packet however little is left, the tail padded: ns-2's rule of
    /// one `size_` for every packet, and what this sender did before 2026-11-28 (kept so
    /// that runs made before can be repeated, `params = { tail_packet = "whole" }`).
    Whole,
}

/// TFWC sender and receiver parameters.
///
/// `Default` is Choi's ns-2.34 `Agent/TFWC` (GitHub `soohyunc/TFWC`, `ns-2.34/tcp/tfwc.cc`),
/// the agent that produced the thesis' Ch. 3-4 simulations: where 002's text and that code
/// disagree the field documents both and defaults to the code, because the code is what the
/// thesis' figures show. [`TfwcConfig::thesis`] is 002's text.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TfwcConfig {
    /// Bytes of a data packet on the wire. 002 Ch. 4 simulates 1000-byte packets.
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub packet_size: u32,
    /// Bytes of an ACK on the wire: ns-2's TFWC sink sends 40-byte ACKs (spec 002 §2.3 \[X\]).
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub ack_size: u32,
    /// Bytes of a data packet that are not the application's: the receiver counts each
    /// packet's size less `header_size` as delivered (goodput), and an application-limited
    /// sender takes up to `packet_size - header_size` of its offered buffer per packet. 0 in the simulator,
    /// where a packet is ns-2's `Agent/TFWC` `size_`, the whole packet, as in Choi's traces;
    /// the UDP transport sets it to the TFWC data header it puts before the payload
    /// (`wire::DATA_LEN`), so `tfcc recv` reports payload, as it does for TFRC.
    #[serde(deserialize_with = "crate::quantity::bytes_u32")]
    pub header_size: u32,
    /// What a frame's tail goes out in; see [`TailPacket`]. `short` (header and the rest) in
    /// every preset.
    pub tail_packet: TailPacket,
    /// The 3 numbers below the Ack Vector head that are not yet judged, TCP's 3-DupAck rule
    /// (002 Sec. 3.2.3). The sender's AoA is the number below the margin (ns-2's `H − 4`).
    pub margin: u64,
    /// Closed loss intervals in the average, n = 8 with TFRC's weights and
    /// `ALI = max(I_new, I)` (002 Sec. 3.2.2; `loss_history::AliConfig::tfwc`).
    pub history_size: usize,
    /// The weights of the average; see [`HistoryWeights`]. 002 Sec. 3.2.2 says n = 8 with
    /// TFRC's weights; Choi's ns-2.34 code, which produced the thesis' simulations, keeps
    /// `HSZ = 16` intervals with its own weights (spec 002 §2.2 \[X\]). The default is the code
    /// (`history_size = 16`, `choi`); `history_size = 8` with `tfrc` is the thesis' text.
    pub history_weights: HistoryWeights,
    /// Window before the first loss, in packets: 1, growing by one per ACK (slow start,
    /// 002 Sec. 3.3.1; Choi's code starts at 1, spec 002 §2.7 \[X\]).
    pub initial_window: u32,
    /// Upper bound on the window in packets, the equation's `w_max` (002 Eq. 2.2). The thesis
    /// gives no value; the default is large enough not to bind on any dumbbell of 002 Ch. 4.
    pub max_window: u32,
    /// Switch to timer-paced sending when the window falls below [`Self::rate_threshold`]
    /// (002 Sec. 3.3.2, the hybrid mode). Off gives the window-only TFWC of Fig. 3.5.
    pub hybrid: bool,
    /// The hybrid threshold in packets: "less than two packets" (002 Sec. 3.3.2). Choi's code
    /// used 2.5 (ns-2.34 `ctrl_win`: `float_win_ < 2.5`), 2.0 (his ns-2.28 tree and Vic). The
    /// default is the ns-2.34 code's 2.5, the code of the thesis' simulations.
    pub rate_threshold: f64,
    /// Window rounding; see [`Rounding`]. 002 App. A.2.2 rounds W(0.05) = 3.69 "up" to 4;
    /// Choi's ns-2.34 code truncates (`(int)`), and that code ran the thesis' simulations, so
    /// the default is `floor`.
    pub rounding: Rounding,
    /// How the first loss seeds the history; see [`FirstLossSeed`]. The default is Choi's
    /// ns-2.34 code (`grid-truncated`), the thesis preset Algorithm 2 as printed (`grid`).
    pub first_loss_seed: FirstLossSeed,
    /// The smallest window in packets after rounding. 1 in the thesis' reading (App. A) and
    /// Vic; 0 in Choi's ns-2.34 code, which has no floor in `ctrl_win`: below W = 1 the
    /// window-only sender sends nothing on an Ack Vector and lets a packet out only when its
    /// timer expires (Algorithm 1 line 8). Only window mode reads it.
    pub min_window: u32,
    /// Multiplies the rate-mode inter-packet interval. 1 in the thesis' footnote 6 and Vic;
    /// Choi's ns-2.34 `new_rto` multiplies by 0.8 because TFWC "got less throughput than TCP"
    /// (spec 002 §2.8 \[X\]). The default is the ns-2.34 code's 0.8.
    pub rate_mode_scale: f64,
    /// Multiply the rate-mode interval by TFRC's delay factor `sqrt(R)/M` (the latest RTT
    /// sample's root over the EWMA of the roots, gain 0.1), as Choi's ns-2.34 `new_rto` does
    /// (spec 002 §2.8 \[X\]). 002's text gives the interval itself, footnote 6 of Sec. 3.2.5:
    /// "ipi = t_RTT·sqrt(2p/3) + t_RTO·(3·sqrt(3p/8))·p·(1 + 32p²)", with no such factor (the
    /// delay-based adjustment appears only in Sec. 2.4's description of TFRC, and there as a
    /// factor on the *rate*); Sec. 3.3.2's "TFRC-like" names the pacing, not this term. So
    /// [`TfwcConfig::thesis`] sets false (mechanism audit of 2026-11-26, tfwcaudit); the
    /// default is the ns-2.34 code's true.
    pub rate_mode_delay_scaling: bool,
    /// Cap the timeout term's factor of the rate-mode interval at 1, PFTK's original
    /// `min(1, 3·sqrt(3p/8))`, as Choi's ns-2.34 `new_rto` does (spec 002 §2.1, §2.8 \[X\]).
    /// 002's footnote 6 prints `t_RTO·(3·sqrt(3p/8))·p·(1 + 32p²)` without the cap, so
    /// [`TfwcConfig::thesis`] sets false; the default is the ns-2.34 code's true. The two differ
    /// only above `p = 8/27 ≈ 0.30`, where the capped interval is shorter. The window (Eq. 3.4)
    /// never takes the cap: 002 Eq. 3.2 prints none and neither does Choi's window code.
    pub rate_mode_pftk_min: bool,
    /// cwnd jitter (002 Sec. 3.3.3): on each Ack Vector inflate the window by one packet with
    /// [`Self::jitter_probability`], and at least once per RTT.
    pub jitter: bool,
    /// Which jitter rule; see [`JitterRule`]. The default is Choi's ns-2.34 code, which ran
    /// the thesis' Fig. 3.6 and Ch. 4 simulations; `thesis` is 002 Sec. 3.3.3's text.
    pub jitter_rule: JitterRule,
    /// The "force inflater": inflate at the end of an RTT in which no draw did (002 Sec. 3.3.3,
    /// "at least once per RTT"). Choi's ns-2 code runs it only under the opposite condition
    /// (spec 002 §2.9 \[X\], [`JitterRule::Ns2`]); false leaves the 10 % draws alone. Both
    /// rules read it.
    pub jitter_force: bool,
    /// 10 % per Ack Vector (002 Sec. 3.3.3).
    pub jitter_probability: f64,
    /// Jitter is off above this loss event rate: 25 % (002 Sec. 3.3.3; [`JitterRule::Thesis`]
    /// only, Choi's code has no such bound).
    pub jitter_max_p: f64,
    /// Jitter is off when the ALI moved by more than this many packets within the RTT: 10
    /// (002 Sec. 3.3.3, "corresponds to a 10 % loss-rate variation"). Under
    /// [`JitterRule::Ns2`] the same 10 is the move that *allows* the forced inflation.
    pub jitter_max_ali_change: f64,
    /// Double the timer on each window-mode expiry (002 Sec. 3.2.5, Algorithm 1
    /// `backoffTimer()`; Choi's ns-2.28 tree, `rto_ = 2 * rto_`). Choi's ns-2.34
    /// `backoff_timer()` instead sets it to `2·SRTT` (the doubling commented out), so repeated
    /// expiries come every 2·SRTT until an Ack Vector arrives (spec 002 §2.5 \[X\]); false
    /// selects that, the default, as the ns-2.34 code ran the thesis' simulations.
    pub timer_backoff: bool,
    /// How the losses of a timer stall form loss events; see [`StallLosses`].
    pub stall_losses: StallLosses,
    /// The RTT estimator; see [`RttEstimator`]. Default Choi's ns-2.34 agent's.
    pub rtt_estimator: RttEstimator,
    /// The gain `1 − df` of the sender's RTT averages: the SRTT of [`RttEstimator::Ns2`]
    /// (`SRTT = df·SRTT + (1 − df)·R`) and the mean `M` of `sqrt(R)` that scales the rate-mode
    /// interval, both updated with the one `df` in Choi's code (spec 002 §2.5 \[X\]). 0.1 in the
    /// ns-2.34 agent (`df_ = 0.9`, "by RFC 5348"), the default; 0.05 in Vic (df = 0.95, the
    /// ns-2 agent's earlier value). The RFC 6298 estimator's SRTT keeps RFC 6298's 1/8 and
    /// only `M` reads this. Stored as the gain, not `df`, because `1 − 0.9` is not 0.1 in
    /// binary: the default's outputs stay bit-identical.
    pub rtt_gain: f64,
    /// The clock tick of the rate mode's `t0` (the equation's `t_RTO`, ns-2 TCP's
    /// tick-quantised `SRTT + 4·RTTVAR`) under [`RttEstimator::Ns2`]: 0.1 s in Choi's ns-2.34
    /// agent (`tcp_tick_`), the default, 0.01 s in Vic (spec 002 §2.5 \[X\]). The RFC 6298
    /// estimator does not read it (its granularity `G` is 10 ms).
    pub t0_tick: Dur,
    /// RTO before the first RTT sample: 3 s (RFC 2988, as Choi's code; spec 002 §2.5 \[X\]).
    pub initial_rto: Dur,
    /// Lower bound on the RTO. The thesis gives none (it cites RFC 2988); Vic uses 0.2 s
    /// (Linux), Choi's ns-2 agent `minrto_ = 0` (spec 002 §2.5 \[X\]): the window-mode timer is
    /// `SRTT + max(10 ms, 4·RTTVAR)` however short the RTT. The default is the ns-2 agent's 0,
    /// as it ran the thesis' simulations.
    pub min_rto: Dur,
    /// Upper bound on the RTO: 60 s (RFC 2988, Vic).
    pub max_rto: Dur,
    /// The smallest RTT sample taken (`now − echo` of an Ack Vector): a smaller one, 0 when an
    /// ACK is handled at the instant its packet left, is raised to this before it reaches the
    /// RTT estimators and the ISM delay average, so none is ever 0. 002 is silent; default 1 µs,
    /// [`crate::rtt::DEFAULT_MIN_RTT_SAMPLE`] (as TFRC's `min_rtt_sample`). Must be > 0.
    pub min_rtt_sample: Dur,
    /// Seed of the jitter draws. A driver derives it from its own per-flow random stream.
    pub seed: u64,
}

impl Default for TfwcConfig {
    fn default() -> Self {
        TfwcConfig {
            packet_size: 1000,
            ack_size: 40,
            header_size: 0,
            tail_packet: TailPacket::Short,
            margin: 3,
            history_size: 16,
            history_weights: HistoryWeights::Choi,
            initial_window: 1,
            max_window: 100_000,
            hybrid: true,
            rate_threshold: 2.5,
            rounding: Rounding::Floor,
            first_loss_seed: FirstLossSeed::GridTruncated,
            min_window: 0,
            rate_mode_scale: 0.8,
            rate_mode_delay_scaling: true,
            rate_mode_pftk_min: true,
            jitter: true,
            jitter_rule: JitterRule::Ns2,
            jitter_force: true,
            jitter_probability: 0.1,
            jitter_max_p: 0.25,
            jitter_max_ali_change: 10.0,
            timer_backoff: false,
            stall_losses: StallLosses::OneEvent,
            rtt_estimator: RttEstimator::Ns2,
            rtt_gain: 0.1,
            t0_tick: Dur::from_millis(100),
            initial_rto: Dur::from_secs(3),
            min_rto: Dur::ZERO,
            max_rto: Dur::from_secs(60),
            min_rtt_sample: crate::rtt::DEFAULT_MIN_RTT_SAMPLE, // 002 silent; see rtt.rs
            seed: 0,
        }
    }
}

impl TfwcConfig {
    /// The TFWC of 002's text where it differs from Choi's ns-2.34 code: 8 loss intervals
    /// with TFRC's weights (Sec. 3.2.2), the window rounded to the nearest integer and at
    /// least 1 (App. A.2.2), the hybrid mode below 2 packets (Sec. 3.3.2) with footnote 6's
    /// interval as printed (neither the 0.8 factor nor the `sqrt(R)/M` delay scaling), the jitter's disabling rules and forced inflation (Sec. 3.3.3),
    /// the doubling back-off (Sec. 3.2.5, Algorithm 1), and, where the text is silent, the
    /// RFC 6298 estimator of the RFC 2988 it cites with Vic's 0.2 s floor under the RTO.
    pub fn thesis() -> Self {
        TfwcConfig {
            history_size: 8,
            history_weights: HistoryWeights::Tfrc,
            rounding: Rounding::Nearest,
            first_loss_seed: FirstLossSeed::Grid,
            min_window: 1,
            rate_threshold: 2.0,
            rate_mode_scale: 1.0,
            rate_mode_delay_scaling: false,
            rate_mode_pftk_min: false,
            jitter_rule: JitterRule::Thesis,
            timer_backoff: true,
            rtt_estimator: RttEstimator::Rfc6298,
            min_rto: Dur::from_millis(200),
            ..Self::default()
        }
    }

    /// The TFWC that ran inside Vic for 002's Ch. 6 experiments (R1-R10), from the Vic code
    /// of June 2010 (`uclmediatools/vic`, branch `cc`, `TfwcSndr`) as spec 002 reads it, where
    /// that code differs from the ns-2.34 agent of [`TfwcConfig::default`]. Where the spec names
    /// no Vic value the field keeps 002's text, as [`TfwcConfig::thesis`] does; each line says
    /// which. Fields the spec does not discuss at all (sizes, `max_window`, `stall_losses`,
    /// `min_rtt_sample`) keep the default. Vic's byte-counted window (Eq. 5.1-5.2) and its
    /// reordering revert (Sec. 5.1.4) have no field: the window counts packets (a frame's
    /// short tail, [`TailPacket::Short`], counts as one) and the simulator does not reorder.
    pub fn vic() -> Self {
        TfwcConfig {
            // §2.3 [X]: Vic's margin is (H, H − 1, H − 2) and its AoA H − 3, one closer to the
            // head than ns-2's (H − 1 .. H − 3, AoA H − 4): numbers up to H − 3 are judged.
            margin: 2,
            // §2.2 [X]: Vic builds with SHORT_HISTORY, 8 intervals with TFRC's weights.
            history_size: 8,
            history_weights: HistoryWeights::Tfrc,
            // §2.8 [X], App. A.3: `(int)(Wf + 0.5)`, at least 1, rate mode below Wf = 2.0.
            rounding: Rounding::Nearest,
            min_window: 1,
            rate_threshold: 2.0,
            // §2.7: the spec names no Vic seed; Algorithm 2 as printed, as the thesis preset.
            first_loss_seed: FirstLossSeed::Grid,
            // §2.8 [X]: the code's interval, PFTK's min(1, ·) and sqrt(R)/M, without ns-2's 0.8.
            rate_mode_scale: 1.0,
            rate_mode_delay_scaling: true,
            rate_mode_pftk_min: true,
            // §2.9 [X]: "The Vic code has no jitter".
            jitter: false,
            // §2.5 [X]: the back-off doubles the RTO (clamped at max_rto).
            timer_backoff: true,
            // §2.5 [X]: Choi's estimator with df = 0.95, RTO = SRTT + max(10 ms, 4·RTTVAR)
            // within 0.2-60 s, 3 s before a sample; t0 on 10 ms ticks, 6 s before a sample.
            rtt_estimator: RttEstimator::Ns2,
            rtt_gain: 0.05,
            t0_tick: Dur::from_millis(10),
            initial_rto: Dur::from_secs(3),
            min_rto: Dur::from_millis(200),
            max_rto: Dur::from_secs(60),
            ..Self::default()
        }
    }

    /// The configuration of a preset name: `ns2` (or `default`), `thesis` or `vic`.
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "ns2" | "default" => Some(Self::default()),
            "thesis" => Some(Self::thesis()),
            "vic" => Some(Self::vic()),
            _ => None,
        }
    }

    /// Checks every field against its domain; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let bad = |f: &str, why: &str| Err(format!("{f}: {why}"));
        if self.min_rtt_sample.is_zero() {
            return bad("min_rtt_sample", "must be positive");
        }
        if self.packet_size == 0 {
            return bad("packet_size", "must be positive");
        }
        if self.ack_size == 0 {
            return bad("ack_size", "must be positive");
        }
        if self.header_size > self.packet_size {
            return bad("header_size", "must not exceed packet_size");
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
        if !(self.rtt_gain > 0.0 && self.rtt_gain <= 1.0) {
            return bad("rtt_gain", "must be in (0, 1]");
        }
        if self.t0_tick.is_zero() {
            return bad("t0_tick", "must be positive");
        }
        if self.initial_rto.is_zero() {
            return bad("initial_rto", "must be positive");
        }
        // An RTO of 0 expires at the instant it is armed, again and again without time moving
        // (`max_rto = 0` held a 3 s run at t = 0 while it grew past 10 GB).
        if self.max_rto.is_zero() {
            return bad(
                "max_rto",
                "must be positive (RFC 2988 lets an upper bound be 60 s or more)",
            );
        }
        if self.min_rto > self.max_rto {
            return Err(format!(
                "min_rto: must not exceed max_rto ({} s), got {} s",
                self.max_rto.as_secs_f64(),
                self.min_rto.as_secs_f64()
            ));
        }
        if self.margin > 64 {
            return bad("margin", "must be at most 64");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_rto_bound_is_refused_naming_the_field() {
        let check = |f: fn(&mut TfwcConfig)| {
            let mut c = TfwcConfig::default();
            f(&mut c);
            c.validate()
        };
        assert!(check(|_| {}).is_ok());
        assert!(check(|c| c.max_rto = Dur::ZERO)
            .unwrap_err()
            .starts_with("max_rto: must be positive"));
        assert!(check(|c| c.initial_rto = Dur::ZERO)
            .unwrap_err()
            .starts_with("initial_rto: "));
        let e = check(|c| c.min_rto = Dur::from_secs(61)).unwrap_err();
        assert_eq!(e, "min_rto: must not exceed max_rto (60 s), got 61 s");
    }
}
