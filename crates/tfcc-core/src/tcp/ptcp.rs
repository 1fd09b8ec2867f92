//! Predictable-throughput TCP (001, Yamanegi 2007): a congestion-avoidance increase that aims
//! at an application's required throughput `bw` over every evaluation slot, on top of an
//! unchanged Reno/SACK sender (slow start, fast recovery and timeouts are the TCP's own, 001
//! Sec. 2.2).
//!
//! What runs here, per ACK in congestion avoidance (001 Sec. 2.2, spec 001 §2):
//!
//! - **Eq. 1** `cwnd += k / cwnd` (the sender applies it with the `k` returned by
//!   [`Ptcp::increase`]).
//! - **Slots.** An evaluation slot lasts `e` sRTTs; it is cut into control slots of `s` sRTTs,
//!   each frozen at the sRTT `srtt_i` of its start. The target of control slot `i` carries the
//!   shortfall (or surplus) of the previous one: `g_i = bw + (g_{i−1} − tput_{i−1})`, `g_0 = bw`,
//!   reset at every evaluation slot (spec 001 §2.2: the per-evaluation-slot metric is what the
//!   carry serves; the thesis does not say so outright). The surplus is carried because the
//!   formula carries it and the prose makes no exception ("determined according to the
//!   difference between the target throughput and the achieved throughput in the (i−1)-th
//!   control slot", 001 Sec. 2.1). With equal control slots the evaluation slot's mean is then
//!   `bw + (tput_last − g_last)/n`: it meets `bw` exactly when its last control slot meets its
//!   target. (Measured, not adopted: carrying only shortfalls gives 93.8-98.8 % of slots against
//!   40-50 Reno flows with the oracle, 4 seeds, against 44.8-79.3 % with the surplus carried.)
//! - **Eq. 2** `k_bw = 2·(g_i·srtt_i·s − a_j − m·cwnd) / (m·(m+1))` with `m` rounds left to
//!   send in. The printed formula has `m = s − n_j − 1`; the prose next to it says the packets
//!   are to be sent within `(s − 2)·srtt_i`, the rest of the slot being `(s − 2 − n_j)·srtt_i`,
//!   because "it takes one RTT to receive the ACK packet corresponding to the transmitted
//!   packet, and ... at least one RTT to detect packet loss and retransmit" (001 Sec. 2.2.1;
//!   spec 001 §7 lists it as a mismatch). The two agree when `n_j` is read as an ordinal, as
//!   the text writes it ("the `n_j`-th RTT from the beginning of the control slot", the first
//!   RTT being `n_j = 1`): the rounds `n_j, …, s − 2` of the `(s − 2)`-RTT horizon are
//!   `s − n_j − 1`. Here `n_j` counts from 0 (`⌊(now − start)/srtt_i⌋`), so the printed
//!   formula is `m = s − n_j − 2` ([`PtcpConfig::eq2_reserve`] = 2; 1 plans to the slot's end
//!   instead). Measured on E1 with the oracle (seed 1, `m = 1` guard below): reserve 1, 8 of
//!   14 slots after the first two met; reserve 2, 11 of 14.
//! - **Eq. 2 in the last two RTTs** (`m < 1`: `n_j ≥ s − 2`, or past the slot's nominal end,
//!   which is noticed on the next ACK): the printed denominator is zero (`(s − n_j − 1)(s − n_j)`
//!   with ordinal `n_j = s − 1`, then `s`) and the formula's value grows without bound while
//!   packets are still needed. Taken literally ([`PtcpConfig::eq2_guard`] = `k_max`, spec 001
//!   §2.4's recommended guard): `k_bw = +∞`, so `k = k_max`, while `need > 0`: whatever the
//!   `(s − 2)`-RTT plan has not sent by then is overdue and goes out as fast as Eq. 3/4 allow;
//!   with nothing needed, the `m = 1` value (`need − cwnd`, `k_min` then holds). At `s = 2`
//!   the whole slot is in this region. The alternative, `one_round` (`m = 1`, "the whole
//!   remaining need in the next round", the default before 2026-11-26), lets a slot that is
//!   short by less than a window ask for nothing (`need − cwnd < 0`). Measured with the oracle
//!   over 4 seeds (random Reno starts), % of evaluation slots met, `one_round` → `k_max`: E2
//!   20 Mb/s against 30 Reno flows 63.1 → 87.2, 40 flows 40.3 → 77.8, 50 flows 16.6 → 44.8;
//!   10 Mb/s against 40 flows 47.1 → 79.3; 10-20 flows and E1 within the seeds' spread
//!   (docs/reproductions/log/ptcp.md).
//! - **`a_j` of Eq. 2** is "the number of transmitted packets from the beginning of the control
//!   slot" (001 Sec. 2.2.1), while the slot's throughput counts "successfully transmitted"
//!   packets: new segments *sent* is the literal reading and the default
//!   ([`PtcpConfig::eq2_count`]); counting segments *acknowledged* instead (the slot's own
//!   measure, so packets in flight still count as needed) is the alternative. Neither closes
//!   the slots that land just under `bw`: the carried target aims at exactly `bw` either way,
//!   and in steady state the packets in flight at a slot's end are credited to the next slot
//!   whichever is counted. Measured on E1 with the oracle (seed 1, `one_round` guard), slots
//!   after the first two met: sent 11 of 14, acked 10 of 14; E2, 30 Reno flows, 20 Mb/s, oracle:
//!   sent 60.7 % (mean 20.05 Mb/s), acked 62.3 % (20.16 Mb/s). With the `k_max` guard, 4 seeds:
//!   E2 20 Mb/s 30 flows sent 87.2 %, acked 81.7 %; 40 flows 77.8 %, 66.7 %; E1 76.8 %, 78.6 %.
//! - **Slot ends.** An evaluation slot ends `e·srtt` after its start and cuts its last control
//!   slot short ([`PtcpConfig::eval_end`] = `time`; Eq. 2 then plans that slot over its cut
//!   length, `ctrl_len / srtt_i` rounds), or after whole control slots of `e` RTTs in
//!   all (`ctrl_slots`); 001 Sec. 2 gives both clocks ("`t = e·rtt`", "we split an evaluation
//!   slot into ... control slots") and not which wins when the sRTT moves. Both end on the
//!   first ACK after the nominal end. Measured with the oracle, `k_max` guard, 4 seeds:
//!   `ctrl_slots` within the seeds' spread of `time` everywhere (E2 20 Mb/s 30 flows 80.4
//!   against 87.2 %, 40 flows 81.5 against 77.8 %), so the default stays `time`.
//! - **Eq. 3 / Eq. 4** `k_max = A·srtt_i − cwnd` while every earlier control slot of this
//!   evaluation slot met its target, else `min(A + g_i − tput_{i−1}, P)·srtt_i − cwnd`. The
//!   condition is the union of the formula's ("any earlier control slot of the present
//!   evaluation slot missed", a sticky flag) and the prose's ("the previous control slot
//!   missed", which may lie in the previous evaluation slot). The formula alone deadlocks once
//!   `s = e`: every evaluation slot is then one control slot that starts under Eq. 3, so a miss
//!   can never happen under Eq. 4, `s` can never shrink and the flow stays Reno-like however
//!   far behind it falls (observed in E1: 7 of 14 slots met with 40 Reno flows). The thesis'
//!   Fig. 6 shows `s` falling in the heaviest phase, which the union allows.
//! - **Bounds.** `k = min(k_bw, k_max)`, then `k = max(k, k_min)` when `k_min` is on: `k_min`
//!   wins over `k_max`, because Eq. 3 is negative on any busy path (`A·srtt < cwnd`) and the
//!   thesis' light-load results show `k = 1`, i.e. Reno (spec 001 §2.5). Without `k_min`
//!   (the constant-rate mode, 001 Fig. 16) `k` may be negative so that the window comes back
//!   down to `bw` after slow start; the sender keeps `cwnd ≥` [`PtcpConfig::cwnd_floor`].
//! - **Loss handling stays the TCP's** (001 Sec. 2.2): no `k` in slow start or in a fast
//!   recovery, and by default none while the losses of a timeout are repaired either, although
//!   the window is past `ssthresh` then ([`PtcpConfig::after_timeout`], [`AfterTimeout`]).
//! - **Control-slot length** (001 Sec. 2.2.3, Fig. 3, reconstructed in spec 001 §2.6): a
//!   control slot that missed its target while Eq. 4 was in force halves `s` from the next
//!   control slot; an evaluation slot whose every control slot met its target under Eq. 3,
//!   ending with `cwnd ≥ bw·srtt`, doubles `s` for the next evaluation slot; `s_min ≤ s ≤ e`.
//!   The text's test is `cwnd ≥ bw·srtt_i` without saying at which moment or which control
//!   slot's `i`: it is made on the ACK that closes the evaluation slot, with that ACK's `cwnd`
//!   and the sender's sRTT then, which is `srtt_i` of the control slot that ACK opens (the
//!   first of the next evaluation slot, whose `s` the test decides).
//!
//! Units: `bw`, `tput`, `g`, `A` and `P` are packets per second, windows packets. `bw` counts
//! payload (the thesis' 20 Mb/s is 2500 pkt/s of 1000 B segments, spec 001 §2.1); `A` and `P`
//! count whole packets on the wire, since they bound how many packets the path holds.
//!
//! Throughput is counted from cumulative ACKs ("packets successfully transmitted", spec 001
//! §2.2), including those that arrive during a recovery, and divided by the slot's *actual*
//! length (a slot end noticed late, after a timeout, does not inflate the rate).

use std::collections::VecDeque;

use serde::Deserialize;

use super::aggregate::{self, AggregateHandle};
use super::imtcp::Imtcp;
use super::path::{PathEstimator, PathOracle, PathSource};
use crate::packet::Packet;
use crate::time::{Dur, Time};
use crate::units::Rate;

/// Where `A` (available bandwidth) and `P` (capacity) come from (spec 001 §2.9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EstimatorKind {
    /// ImTCP-style inline measurement from the flow's own paced data and ACK timing
    /// ([`super::imtcp`]): what the thesis' single-connection experiments use (001 Sec. 2.2.2).
    #[default]
    Inline,
    /// Values pushed by the driver ([`super::path::PathOracle`]): in the simulator the
    /// bottleneck rate minus the measured cross traffic, as the thesis assumes for its
    /// multi-connection runs (001 Sec. 3.2).
    Oracle,
}

/// What `a_j` of Eq. 2 counts (001 Sec. 2.2.1: "the number of transmitted packets from the
/// beginning of the control slot to when the j-th ACK packet is received").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Eq2Count {
    /// New data segments sent since the control slot began: the literal reading ("transmitted",
    /// where the slot's throughput counts "successfully transmitted" packets).
    #[default]
    Sent,
    /// Segments cumulatively acknowledged since the control slot began: the count the slot's
    /// throughput is judged on, so the packets in flight still count as needed.
    Acked,
}

/// What Eq. 2 gives once no round is left to plan (`m = s − n_j − eq2_reserve < 1`: the
/// last `eq2_reserve` RTTs of the control slot, or past its end, which is only noticed on an
/// ACK). The printed denominator `(s − n_j − 1)(s − n_j)` is then zero or negative (001 Sec.
/// 2.2.1 does not handle it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Eq2Guard {
    /// `m = 1`: the whole remaining need in the next round, `k_bw = need − cwnd`.
    OneRound,
    /// The limit of the printed formula as its denominator goes to zero: `k_bw = +∞` (so
    /// `k = k_max`) while packets are still needed, "the remaining need must be met at once"
    /// (spec 001 §2.4); when none are needed, as `OneRound` (a `−∞` would empty the window of
    /// the constant-rate mode).
    #[default]
    KMax,
}

/// Where an evaluation slot ends (001 Sec. 2, 2.1: "we introduce the variable e as `t = e·rtt`"
/// and "we split an evaluation slot into multiple sub-slots, called control slots" of `s·srtt_i`
/// each; the thesis does not say which clock wins when the control slots' sRTTs differ from
/// the evaluation slot's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvalEnd {
    /// `e·srtt` after its start (the sRTT at its start); the last control slot is cut short
    /// at that time.
    #[default]
    Time,
    /// After control slots of `e` RTTs in all (`s` each, `srtt_i` each): the evaluation slot is
    /// made of whole control slots, and none is cut short.
    CtrlSlots,
}

/// Which increase runs after a retransmission timeout until every segment outstanding at the
/// timeout is acknowledged (the TCP's go-back-N repair of the timeout, ns-2's `recover_`):
/// 001 Sec. 2.2, "this mechanism does not modify the TCP behavior in the slow start phase or
/// when a TCP connection experiences packet loss(es)", and Sec. 2: "the proposed mechanism
/// changes the behavior of TCP only in the congestion avoidance phase". The thesis does not
/// say where the repair of a timeout ends; a fast recovery's end is the TCP's own (no `k`
/// during it either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterTimeout {
    /// Reno's increase (`k = 1`) while the segments outstanding at the timeout are being
    /// repaired, even once the window has climbed back past `ssthresh`: the connection is
    /// still "experiencing packet losses". Eq. 1 with PTCP's `k` from the ACK that covers them.
    #[default]
    Reno,
    /// Eq. 1 with PTCP's `k` as soon as slow start ends (`cwnd ≥ ssthresh`), repair or not
    /// (the behaviour before 2026-11-26). After repeated timeouts `ssthresh` is 2-3 segments,
    /// so `k` up to `P·srtt − cwnd` (≈ 370 on the thesis' dumbbell) lands on a window of 2-3:
    /// about 100 packets on one ACK.
    Ptcp,
}

/// Which members of an aggregate share the packets still needed (the multi-connection Eq. 2)
/// and the aggregate's `k_max` headroom (001 Sec. 2.3: "`N_pm` is the number of active TCP
/// connections"). The thesis does not say whether a connection in loss recovery or in slow
/// start, where `k` is not used (Eq. 1 applies in congestion avoidance only), counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupShare {
    /// Every active member (sent or acknowledged within [`PtcpConfig::group_idle`]), whatever
    /// its TCP state: the text's "active TCP connections", and a connection in loss recovery
    /// is still open and sending. Its share of the need is then not pursued by anyone until
    /// the shared `a_j^sum` shows the shortfall to the others.
    #[default]
    Active,
    /// Only the active members whose last ACK was in congestion avoidance (the ones that apply
    /// `k`): the need and the headroom are split over the connections that can act on them.
    /// The windows of the others still count in the headroom's `Σcwnd`.
    CongAvoid,
}

/// How `k_min` applies in an aggregate (001 Sec. 2.2.2 sets `k_min = 1` "to preserve the basic
/// characteristics of TCP Reno"; Sec. 2.3 does not say whether per connection or for the sum).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKMin {
    /// Every member keeps `k ≥ k_min_value`: each connection is at least as aggressive as the
    /// Reno connection it is (the aggregate at least as `N_pm` Reno connections, the thesis'
    /// "TCP Reno" comparison of Fig. 9).
    #[default]
    PerMember,
    /// The aggregate keeps `Σk ≥ k_min_value`: each member's floor is `k_min_value / N_pm`
    /// (with the `N_pm` of [`GroupShare`]), so the sum grows like one Reno connection.
    Shared,
}

/// PTCP's parameters. Defaults are the thesis' (001 Sec. 3.1: `e = 32`, `s` from 16,
/// `k_min = 1`) for its 100 Mb/s, 20 ms ns-2 dumbbell.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PtcpConfig {
    /// Required throughput `bw` of payload (001 Sec. 2.1). 20 Mb/s is the thesis' main case
    /// (20 % of the 100 Mb/s bottleneck, 001 Sec. 3.2).
    pub bw: Rate,
    /// Evaluation slot length in sRTTs (001 Sec. 3.1: `e = 32` in every experiment).
    pub e: u32,
    /// Initial control slot length in sRTTs (001 Sec. 3.1: 16).
    pub s_init: u32,
    /// Smallest control slot length in sRTTs (001 Sec. 2.2.3: `2 ≤ s`, one RTT of ACK latency
    /// and one of loss repair).
    pub s_min: u32,
    /// Keep `k ≥ k_min_value` (001 Sec. 2.2.2). `false` is the thesis' constant-rate mode, where
    /// the flow stays at `bw` even on an idle path (001 Fig. 16).
    pub k_min: bool,
    /// The lower bound on `k` when [`PtcpConfig::k_min`] is on: 1, Reno's increase.
    pub k_min_value: f64,
    /// The smallest window the constant-rate mode may shrink to (spec 001 §2.5: a negative `k`
    /// needs a floor; 2 keeps the ACK clock and fast retransmit alive).
    pub cwnd_floor: f64,
    /// Rounds at the end of a control slot that Eq. 2 does not plan to send in: `m = s − n_j −
    /// eq2_reserve`. 2 is the prose of 001 Sec. 2.2.1 (one RTT for the ACK, one for a loss
    /// repair); 1 is the printed Eq. 2 (see the module documentation for the choice).
    pub eq2_reserve: u32,
    /// What `a_j` of Eq. 2 counts (see [`Eq2Count`]); `sent` is the thesis' wording.
    pub eq2_count: Eq2Count,
    /// Eq. 2 once no round is left to plan (see [`Eq2Guard`]).
    pub eq2_guard: Eq2Guard,
    /// Where an evaluation slot ends (see [`EvalEnd`]).
    pub eval_end: EvalEnd,
    /// Source of `A` and `P`.
    pub estimator: EstimatorKind,
    /// The inline estimator's parameters (used when [`PtcpConfig::estimator`] is `inline`).
    pub inline: super::imtcp::ImtcpConfig,
    /// The oracle's averaging window over the bottleneck's cross traffic ("the last RTTs",
    /// spec 001 §2.9 option 1): 40 ms, about 1.3 RTT of the thesis' dumbbell.
    pub oracle_window: Dur,
    /// Name of the aggregate this connection belongs to (001 Sec. 2.3: a proxy controls the sum
    /// of `N_pm` connections' throughput). Connections with the same name share one
    /// controller: slots from the smallest sRTT, `g`, `s` and the regime of the aggregate, the
    /// packets still needed split evenly over the active connections (the multi-connection
    /// Eq. 2) and `k_max` shared (see [`super::aggregate`]). `bw` is then the aggregate's.
    /// `None`: a connection on its own.
    pub group: Option<String>,
    /// A member of an aggregate that has neither sent nor been acknowledged for this long is
    /// not counted in `N_pm` (001 Sec. 2.3: "the sender-side proxy node can identify the number
    /// of active TCP connections"; the thesis does not say how). 500 ms is about 17 RTTs of the
    /// thesis' dumbbell: longer than a fast recovery, shorter than a SURGE think time (k = 1 s).
    pub group_idle: Dur,
    /// Which active members share Eq. 2's need and `k_max` in an aggregate (see [`GroupShare`]).
    pub group_share: GroupShare,
    /// Whether `k_min` holds per member or for the aggregate's sum (see [`GroupKMin`]).
    pub group_k_min: GroupKMin,
    /// The increase while a timeout's losses are repaired (see [`AfterTimeout`]).
    pub after_timeout: AfterTimeout,
    /// The thesis' "constant" comparison instead of PTCP (001 Sec. 3.2, Fig. 7): once an RTT is
    /// measured the window is fixed at `bw · srtt_min` and never reduced, not even by a loss
    /// or a timeout (spec 001 §3.0). Slots are still recorded.
    pub constant: bool,
}

impl Default for PtcpConfig {
    fn default() -> Self {
        PtcpConfig {
            bw: Rate::from_mbps(20),             // 001 Sec. 3.2, 20 % of 100 Mb/s
            e: 32,                               // 001 Sec. 3.1
            s_init: 16,                          // 001 Sec. 3.1
            s_min: 2,                            // 001 Sec. 2.2.3
            k_min: true,                         // 001 Sec. 2.2.2
            k_min_value: 1.0,                    // 001 Sec. 2.2.2, Reno
            cwnd_floor: 2.0,                     // spec 001 §2.5
            eq2_reserve: 2,                      // 001 Sec. 2.2.1, the prose
            eq2_count: Eq2Count::Sent,           // 001 Sec. 2.2.1, "transmitted"
            eq2_guard: Eq2Guard::KMax,           // see Eq2Guard
            eval_end: EvalEnd::Time,             // see EvalEnd
            estimator: EstimatorKind::Inline,    // 001 Sec. 2.2.2, ImTCP
            inline: Default::default(),          // see ImtcpConfig
            oracle_window: Dur::from_millis(40), // spec 001 §2.9
            group: None,                         // one connection
            group_idle: Dur::from_millis(500),   // see the field
            group_share: GroupShare::Active,     // see GroupShare
            group_k_min: GroupKMin::PerMember,   // see GroupKMin
            after_timeout: AfterTimeout::Reno,   // see AfterTimeout
            constant: false,                     // PTCP itself
        }
    }
}

impl PtcpConfig {
    /// The field names, for a loader that shares one `params` table with the TCP underneath.
    pub const FIELDS: &'static [&'static str] = &[
        "bw",
        "e",
        "s_init",
        "s_min",
        "k_min",
        "k_min_value",
        "cwnd_floor",
        "eq2_reserve",
        "eq2_count",
        "eq2_guard",
        "eval_end",
        "estimator",
        "inline",
        "oracle_window",
        "group",
        "group_idle",
        "group_share",
        "group_k_min",
        "after_timeout",
        "constant",
    ];

    /// Checks every field; the message names the first bad one (`field: why`).
    pub fn validate(&self) -> Result<(), String> {
        if self.bw.bps() == 0 {
            return Err("bw: the required throughput must be positive".into());
        }
        if self.e < 2 {
            return Err(format!("e: must be at least 2 RTTs, got {}", self.e));
        }
        if self.s_min < 1 || self.s_min > self.e {
            return Err(format!(
                "s_min: must lie in [1, e = {}], got {}",
                self.e, self.s_min
            ));
        }
        if self.s_init < self.s_min || self.s_init > self.e {
            return Err(format!(
                "s_init: must lie in [s_min = {}, e = {}], got {}",
                self.s_min, self.e, self.s_init
            ));
        }
        if !(self.k_min_value.is_finite() && self.k_min_value >= 0.0) {
            return Err(format!(
                "k_min_value: must be a number ≥ 0, got {}",
                self.k_min_value
            ));
        }
        if !(self.cwnd_floor.is_finite() && self.cwnd_floor >= 1.0) {
            return Err(format!(
                "cwnd_floor: must be at least 1 packet, got {}",
                self.cwnd_floor
            ));
        }
        if self.eq2_reserve < 1 || self.eq2_reserve > self.s_min.max(1) {
            return Err(format!(
                "eq2_reserve: must lie in [1, s_min = {}], got {}",
                self.s_min, self.eq2_reserve
            ));
        }
        if self.oracle_window.is_zero() {
            return Err("oracle_window: must be positive".into());
        }
        if self.group.as_deref().is_some_and(str::is_empty) {
            return Err("group: an aggregate's name must not be empty".into());
        }
        if self.group_idle.is_zero() {
            return Err("group_idle: must be positive".into());
        }
        self.inline.validate().map_err(|e| format!("inline.{e}"))
    }
}

/// `A` and `P` in packets per second (whole packets on the wire).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathEstimate {
    /// Available bandwidth `A`: the rate this flow may occupy without taking from others.
    pub available: f64,
    /// Physical capacity `P` of the bottleneck.
    pub capacity: f64,
}

/// Which `k_max` equation is in force (fixed for a control slot at its start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regime {
    /// Eq. 3: every earlier control slot of this evaluation slot met its target.
    Eq3,
    /// Eq. 4: one of them missed it; take bandwidth from others up to the capacity.
    Eq4,
}

/// Which bound set `k` on an ACK: `k = max(k_min, min(k_bw, k_max))` (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// Eq. 2's ideal increase was within the bounds.
    KBw,
    /// `k_max` (Eq. 3/4) cut Eq. 2 down.
    KMax,
    /// `k_min` raised `min(k_bw, k_max)` (only when `k_min` is on).
    KMin,
}

impl Bound {
    /// All bounds, in the order of [`CtrlSlot::bound_counts`].
    pub const ALL: [Bound; 3] = [Bound::KBw, Bound::KMax, Bound::KMin];

    /// `"k_bw"`, `"k_max"` or `"k_min"`.
    pub fn name(self) -> &'static str {
        match self {
            Bound::KBw => "k_bw",
            Bound::KMax => "k_max",
            Bound::KMin => "k_min",
        }
    }

    fn index(self) -> usize {
        match self {
            Bound::KBw => 0,
            Bound::KMax => 1,
            Bound::KMin => 2,
        }
    }
}

/// One finished evaluation slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EvalSlot {
    pub start: Time,
    pub end: Time,
    /// Payload packets acknowledged in the slot per second.
    pub tput: f64,
    /// `tput ≥ bw`.
    pub met: bool,
    /// Window cuts in the slot: fast retransmits (entries into loss recovery) and timeouts.
    pub cuts: [u64; 2],
}

/// One finished control slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CtrlSlot {
    pub start: Time,
    pub end: Time,
    /// The control slot length `s` (sRTTs) it ran with.
    pub s: u32,
    /// Its target `g_i`, pkt/s.
    pub target: f64,
    /// Its throughput, pkt/s.
    pub tput: f64,
    pub regime: Regime,
    /// The bound that set `k` on most of the slot's congestion-avoidance ACKs (ties go to
    /// the earlier of [`Bound::ALL`]); `None` when no ACK of the slot was in congestion
    /// avoidance (slow start, recovery). A diagnostic: it tells a slot missed because `k_max`
    /// held the flow back from one missed with Eq. 2 in charge.
    pub bound_by: Option<Bound>,
    /// How many congestion-avoidance ACKs each bound set `k` on, in the order of
    /// [`Bound::ALL`] (`k_bw`, `k_max`, `k_min`).
    pub bound_counts: [u64; 3],
    /// Of the `k_min` ACKs, those on which `k_max` was below `k_bw`: `k_min` overrode the
    /// Eq. 3/4 cap (Eq. 2 alone asked for more than `k_min`); the rest had Eq. 2 itself below
    /// `k_min`.
    pub k_min_over_k_max: u64,
    /// Window cuts in the slot: fast retransmits and timeouts.
    pub cuts: [u64; 2],
}

/// The per-flow (or, with the aggregate controller, per-group) PTCP state (spec 001 §2.11).
#[derive(Clone, Debug)]
pub struct Ptcp {
    cfg: PtcpConfig,
    /// `bw` in payload packets per second.
    bw: f64,
    s: u32,
    started: bool,
    eval_start: Time,
    eval_len: Dur,
    eval_acked: u64,
    /// RTTs of the control slots closed in this evaluation slot ([`EvalEnd::CtrlSlots`]).
    eval_rtts: u32,
    /// This control slot's length in sRTTs: `s`, or what is left of `e` when that is less
    /// ([`EvalEnd::CtrlSlots`] with an `e` that `s` does not divide).
    s_i: u32,
    /// This control slot's planned length in units of `srtt_i` as Eq. 2 counts it: `s_i`, or
    /// less when [`EvalEnd::Time`] cuts the last control slot of an evaluation slot short
    /// (then `ctrl_len / srtt_i`, real-valued).
    s_plan: f64,
    ctrl_start: Time,
    ctrl_len: Dur,
    /// `srtt_i`, frozen at the control slot's start, seconds.
    srtt_i: f64,
    /// The last non-zero sRTT the sender reported, used while it has none (after a long
    /// back-off the RTT estimator forgets its sRTT until the next sample).
    last_srtt: Option<Dur>,
    /// Control slot index inside the evaluation slot.
    i: u32,
    g: f64,
    tput_prev: Option<f64>,
    /// `a_j`: new data packets sent since the control slot began.
    sent_in_ctrl: u64,
    acked_in_ctrl: u64,
    missed_in_eval: bool,
    /// The last control slot (of this or the previous evaluation slot) missed its target.
    prev_missed: bool,
    grow_ok: bool,
    regime: Regime,
    k: f64,
    k_bw: f64,
    k_max: f64,
    /// Per bound, the ACKs of this control slot on which it set `k` (see [`CtrlSlot`]).
    bound_counts: [u64; 3],
    k_min_over_k_max: u64,
    /// Window cuts (fast retransmits, timeouts) in this control slot and evaluation slot.
    ctrl_cuts: [u64; 2],
    eval_cuts: [u64; 2],
    eval_log: Vec<EvalSlot>,
    ctrl_log: Vec<CtrlSlot>,
    /// `(time, s)` at every change of `s`.
    s_log: Vec<(Time, u32)>,
}

impl Ptcp {
    /// A controller for payload segments of `segment_size` bytes. Out-of-range values are
    /// repaired (never a panic); use [`PtcpConfig::validate`] to reject them.
    pub fn new(cfg: PtcpConfig, segment_size: u32) -> Ptcp {
        let mut cfg = cfg;
        cfg.e = cfg.e.max(2);
        cfg.s_min = cfg.s_min.clamp(1, cfg.e);
        cfg.s_init = cfg.s_init.clamp(cfg.s_min, cfg.e);
        let bw = cfg.bw.bytes_per_sec() / f64::from(segment_size.max(1));
        Ptcp {
            bw,
            s: cfg.s_init,
            started: false,
            eval_start: Time::ZERO,
            eval_len: Dur::ZERO,
            eval_acked: 0,
            eval_rtts: 0,
            s_i: cfg.s_init,
            s_plan: f64::from(cfg.s_init),
            ctrl_start: Time::ZERO,
            ctrl_len: Dur::ZERO,
            srtt_i: 0.0,
            last_srtt: None,
            i: 0,
            g: bw,
            tput_prev: None,
            sent_in_ctrl: 0,
            acked_in_ctrl: 0,
            missed_in_eval: false,
            prev_missed: false,
            grow_ok: true,
            regime: Regime::Eq3,
            k: cfg.k_min_value,
            k_bw: 0.0,
            k_max: 0.0,
            bound_counts: [0; 3],
            k_min_over_k_max: 0,
            ctrl_cuts: [0; 2],
            eval_cuts: [0; 2],
            eval_log: Vec::new(),
            ctrl_log: Vec::new(),
            s_log: vec![(Time::ZERO, cfg.s_init)],
            cfg,
        }
    }

    pub fn config(&self) -> &PtcpConfig {
        &self.cfg
    }
    /// `bw` in payload packets per second.
    pub fn bw_pkts(&self) -> f64 {
        self.bw
    }
    /// The control slot length in sRTTs.
    pub fn s(&self) -> u32 {
        self.s
    }
    /// The last `k` applied (Eq. 1).
    pub fn k(&self) -> f64 {
        self.k
    }
    /// The last Eq. 2 value.
    pub fn k_bw(&self) -> f64 {
        self.k_bw
    }
    /// The last Eq. 3/4 value.
    pub fn k_max(&self) -> f64 {
        self.k_max
    }
    /// The current target `g_i`, pkt/s.
    pub fn target(&self) -> f64 {
        self.g
    }
    pub fn regime(&self) -> Regime {
        self.regime
    }
    /// Finished evaluation slots.
    pub fn eval_slots(&self) -> &[EvalSlot] {
        &self.eval_log
    }
    /// Finished control slots.
    pub fn ctrl_slots(&self) -> &[CtrlSlot] {
        &self.ctrl_log
    }
    /// `(time, s)` at the start and at every change of `s`.
    pub fn s_changes(&self) -> &[(Time, u32)] {
        &self.s_log
    }

    /// A new data segment was sent (retransmissions do not count towards `a_j`, spec 001 §2.4).
    pub fn on_data_sent(&mut self) {
        self.sent_in_ctrl += 1;
    }

    /// An ACK moved the cumulative point by `acked` segments (any ACK, recovery included).
    /// Closes the slots that have ended first, so the ACK counts towards the new slot; `srtt`
    /// is the sender's smoothed RTT and `cwnd` its window. Slots start with the first ACK that
    /// comes with an sRTT. When the sender has no sRTT at the moment (its estimator forgets it
    /// after a long back-off, ns-2's `rtt_backoff`, until a new sample arrives), the last one it
    /// had is used: the ACK is still counted and a slot boundary is still computed from a
    /// real RTT, so the slot clock neither stalls nor collapses to zero-length slots (001
    /// Sec. 2.2 defines slots in sRTTs and says nothing about a sender without one).
    pub fn on_acked(&mut self, now: Time, acked: u64, srtt: Option<Dur>, cwnd: f64) {
        if let Some(s) = srtt.filter(|d| !d.is_zero()) {
            self.last_srtt = Some(s);
        }
        let Some(srtt) = self.last_srtt else {
            return;
        };
        if !self.started {
            self.started = true;
            self.start_eval(now, srtt);
            self.start_ctrl(now, srtt);
        } else {
            self.roll(now, srtt, cwnd);
        }
        self.acked_in_ctrl += acked;
        self.eval_acked += acked;
    }

    fn start_eval(&mut self, now: Time, srtt: Dur) {
        self.eval_start = now;
        self.eval_len = srtt.saturating_mul(u64::from(self.cfg.e));
        self.eval_acked = 0;
        self.eval_rtts = 0;
        self.eval_cuts = [0; 2];
        self.i = 0;
        self.g = self.bw;
        self.missed_in_eval = false;
        self.grow_ok = true;
    }

    fn start_ctrl(&mut self, now: Time, srtt: Dur) {
        self.ctrl_start = now;
        self.srtt_i = srtt.as_secs_f64();
        match self.cfg.eval_end {
            EvalEnd::Time => {
                // The last control slot ends with its evaluation slot, so the carried shortfall
                // is settled inside the slot the metric judges (e/s slots of s RTTs when s
                // divides e and the sRTT does not change).
                // Eq. 2 then plans the packets and rounds of the slot as cut, not of `s`
                // whole RTTs it does not have.
                let left = (self.eval_start + self.eval_len).saturating_since(now);
                let full = srtt.saturating_mul(u64::from(self.s));
                self.s_i = self.s;
                self.ctrl_len = full.min(left);
                self.s_plan = if self.ctrl_len < full && !srtt.is_zero() {
                    self.ctrl_len.as_nanos() as f64 / srtt.as_nanos() as f64
                } else {
                    f64::from(self.s)
                };
            }
            EvalEnd::CtrlSlots => {
                self.s_i = self.s.min(self.cfg.e.saturating_sub(self.eval_rtts)).max(1);
                self.ctrl_len = srtt.saturating_mul(u64::from(self.s_i));
                self.s_plan = f64::from(self.s_i);
            }
        }
        self.sent_in_ctrl = 0;
        self.acked_in_ctrl = 0;
        self.bound_counts = [0; 3];
        self.k_min_over_k_max = 0;
        self.ctrl_cuts = [0; 2];
        self.regime = if self.missed_in_eval || self.prev_missed {
            Regime::Eq4
        } else {
            Regime::Eq3
        };
    }

    /// Close the control slot (and evaluation slot) if its time is up (spec 001 §2.6).
    fn roll(&mut self, now: Time, srtt: Dur, cwnd: f64) {
        let eval_end = self.eval_start + self.eval_len;
        let ctrl_over = now >= self.ctrl_start + self.ctrl_len;
        let eval_over = match self.cfg.eval_end {
            EvalEnd::Time => now >= eval_end,
            EvalEnd::CtrlSlots => ctrl_over && self.eval_rtts + self.s_i >= self.cfg.e,
        };
        if !ctrl_over && !eval_over {
            return;
        }
        self.eval_rtts += self.s_i;
        let elapsed = now.saturating_since(self.ctrl_start).as_secs_f64();
        let tput = if elapsed > 0.0 {
            self.acked_in_ctrl as f64 / elapsed
        } else {
            0.0
        };
        let met = tput >= self.g;
        self.prev_missed = !met;
        self.tput_prev = Some(tput);
        self.ctrl_log.push(CtrlSlot {
            start: self.ctrl_start,
            end: now,
            s: self.s_i,
            target: self.g,
            tput,
            regime: self.regime,
            bound_by: dominant(self.bound_counts),
            bound_counts: self.bound_counts,
            k_min_over_k_max: self.k_min_over_k_max,
            cuts: self.ctrl_cuts,
        });
        if !met {
            self.missed_in_eval = true;
            if self.regime == Regime::Eq4 && self.s > self.cfg.s_min {
                self.set_s(now, (self.s / 2).max(self.cfg.s_min));
            }
        }
        if !(met && self.regime == Regime::Eq3) {
            self.grow_ok = false;
        }
        if eval_over {
            let span = now.saturating_since(self.eval_start).as_secs_f64();
            let etput = if span > 0.0 {
                self.eval_acked as f64 / span
            } else {
                0.0
            };
            self.eval_log.push(EvalSlot {
                start: self.eval_start,
                end: now,
                tput: etput,
                met: etput >= self.bw,
                cuts: self.eval_cuts,
            });
            if self.grow_ok && cwnd >= self.bw * srtt.as_secs_f64() && self.s < self.cfg.e {
                self.set_s(now, (self.s * 2).min(self.cfg.e));
            }
            self.start_eval(now, srtt);
        } else {
            self.i += 1;
            self.g = self.bw + (self.g - tput);
        }
        self.start_ctrl(now, srtt);
    }

    fn set_s(&mut self, now: Time, s: u32) {
        self.s = s;
        self.s_log.push((now, s));
    }

    /// Eq. 2 for the current ACK: `n_j` from the time into the slot, `a_j` the new segments
    /// sent in it, with the `m < 1` guard of the module documentation.
    pub fn eq2(&self, now: Time, cwnd: f64) -> f64 {
        self.eq2_shared(now, cwnd, 1)
    }

    /// The multi-connection Eq. 2 (001 Sec. 2.3): the packets the aggregate still needs,
    /// `g_i·srtt_i·s − a_j^sum`, split evenly over the `n_pm` active connections, against this
    /// connection's own `cwnd`. `n_pm = 1` is Eq. 2. `s` is the slot's planned length in sRTTs,
    /// fractional for a control slot its evaluation slot cuts short ([`EvalEnd::Time`]).
    pub fn eq2_shared(&self, now: Time, cwnd: f64, n_pm: u32) -> f64 {
        let s = self.s_plan;
        let into = now.saturating_since(self.ctrl_start).as_secs_f64();
        let n = if self.srtt_i > 0.0 {
            (into / self.srtt_i).floor()
        } else {
            0.0
        };
        let rounds = s - n - f64::from(self.cfg.eq2_reserve);
        let m = rounds.max(1.0);
        let a = match self.cfg.eq2_count {
            Eq2Count::Sent => self.sent_in_ctrl,
            Eq2Count::Acked => self.acked_in_ctrl,
        };
        let need = (self.g * self.srtt_i * s - a as f64) / f64::from(n_pm.max(1));
        if rounds < 1.0 && need > 0.0 && self.cfg.eq2_guard == Eq2Guard::KMax {
            return f64::INFINITY;
        }
        2.0 * (need - m * cwnd) / (m * (m + 1.0))
    }

    /// Eq. 3 or Eq. 4, by the regime of this control slot; `None` without a path estimate.
    pub fn eq34(&self, cwnd: f64, est: Option<PathEstimate>) -> Option<f64> {
        let est = est?;
        let rate = match (self.regime, self.tput_prev) {
            (Regime::Eq4, Some(prev)) => {
                (est.available + (self.g - prev)).min(est.capacity.max(est.available))
            }
            _ => est.available,
        };
        Some(rate * self.srtt_i - cwnd)
    }

    /// The `k` for an ACK in congestion avoidance (after [`Ptcp::on_acked`]). Without a path
    /// estimate yet (the connection's start, spec 001 §2.12) `k_max` is `k_min_value`, so the
    /// flow is Reno until it knows how much room there is.
    pub fn increase(&mut self, now: Time, cwnd: f64, est: Option<PathEstimate>) -> f64 {
        if !self.started {
            self.k = self.cfg.k_min_value;
            return self.k;
        }
        self.k_bw = self.eq2(now, cwnd);
        self.k_max = self.eq34(cwnd, est).unwrap_or(self.cfg.k_min_value);
        self.k = self.apply_bounds(self.k_bw, self.k_max);
        self.k
    }

    /// [`Ptcp::bound`], and count which bound set `k` towards the control slot's
    /// [`CtrlSlot::bound_by`]. Called once per congestion-avoidance ACK.
    pub fn apply_bounds(&mut self, k_bw: f64, k_max: f64) -> f64 {
        self.apply_bounds_with(k_bw, k_max, self.cfg.k_min_value)
    }

    /// [`Ptcp::apply_bounds`] with `k_min_value` in place of the configured one (an
    /// aggregate's member under [`GroupKMin::Shared`]).
    pub fn apply_bounds_with(&mut self, k_bw: f64, k_max: f64, k_min_value: f64) -> f64 {
        let b = self.binding_with(k_bw, k_max, k_min_value);
        self.bound_counts[b.index()] += 1;
        if b == Bound::KMin && k_max < k_bw {
            self.k_min_over_k_max += 1;
        }
        self.bound_with(k_bw, k_max, k_min_value)
    }

    /// Which bound [`Ptcp::bound`] lets set `k`: `k_min` when it raises `min(k_bw, k_max)`,
    /// else the smaller of `k_bw` and `k_max` (`k_bw` on a tie).
    pub fn binding(&self, k_bw: f64, k_max: f64) -> Bound {
        self.binding_with(k_bw, k_max, self.cfg.k_min_value)
    }

    fn binding_with(&self, k_bw: f64, k_max: f64, k_min_value: f64) -> Bound {
        if self.cfg.k_min && k_bw.min(k_max) < k_min_value {
            Bound::KMin
        } else if k_bw <= k_max {
            Bound::KBw
        } else {
            Bound::KMax
        }
    }

    /// `k = min(k_bw, k_max)`, then at least `k_min` when that is on (module documentation).
    pub fn bound(&self, k_bw: f64, k_max: f64) -> f64 {
        self.bound_with(k_bw, k_max, self.cfg.k_min_value)
    }

    fn bound_with(&self, k_bw: f64, k_max: f64, k_min_value: f64) -> f64 {
        let k = k_bw.min(k_max);
        if self.cfg.k_min {
            k.max(k_min_value)
        } else {
            k
        }
    }

    /// The TCP cut its window: a fast retransmit, or a timeout when `timeout` (counted in the
    /// slots' diagnostics only; the thesis leaves loss handling to the TCP, 001 Sec. 2.2).
    pub fn on_cut(&mut self, timeout: bool) {
        let i = usize::from(timeout);
        self.ctrl_cuts[i] += 1;
        self.eval_cuts[i] += 1;
    }

    /// Whether the first slot has started (an ACK with an sRTT has been counted).
    pub fn started(&self) -> bool {
        self.started
    }
}

/// The bound with the most ACKs, ties to the earlier of [`Bound::ALL`]; `None` for no ACKs.
fn dominant(counts: [u64; 3]) -> Option<Bound> {
    let mut best: Option<Bound> = None;
    for b in Bound::ALL {
        let c = counts[b.index()];
        if c > 0 && best.map_or(true, |x| c > counts[x.index()]) {
            best = Some(b);
        }
    }
    best
}

/// What a PTCP sender carries: the controller, its path source and the cumulative ACK it has
/// counted up to. The TCP sender calls these hooks and nothing else, so its own rules stay
/// Reno's/SACK's (001 Sec. 2.2).
#[derive(Clone, Debug)]
pub struct PtcpSender {
    pub ctl: Ptcp,
    pub path: PathSource,
    /// Next segment expected by the receiver, as far as counted (`0` before any ACK).
    cum_ack: u64,
    /// With the inline estimator: the driver's oracle values, kept only to report the
    /// estimator's error against them (never used for control).
    reference: PathOracle,
    /// Smallest sRTT seen, for the "constant" baseline's window.
    srtt_min: Option<Dur>,
    /// The aggregate this connection is a member of, and its index there ([`super::aggregate`]);
    /// `ctl` is then unused and the aggregate's controller decides.
    group: Option<(AggregateHandle, usize)>,
    /// The last `k` applied to this connection's window.
    k: f64,
    /// After a timeout, the first segment number past those outstanding at it: until the
    /// cumulative ACK reaches it the losses are being repaired ([`AfterTimeout`]).
    timeout_recover: Option<u64>,
}

impl PtcpSender {
    pub fn new(cfg: PtcpConfig, segment_size: u32) -> PtcpSender {
        let path = match cfg.estimator {
            EstimatorKind::Oracle => PathSource::Oracle(PathOracle::new()),
            EstimatorKind::Inline => PathSource::Inline(Box::new(Imtcp::new(cfg.inline.clone()))),
        };
        PtcpSender {
            ctl: Ptcp::new(cfg, segment_size),
            path,
            cum_ack: 0,
            reference: PathOracle::new(),
            srtt_min: None,
            group: None,
            k: 1.0,
            timeout_recover: None,
        }
    }

    /// Every ACK, before the TCP acts on it: the slots count what it acknowledges and the
    /// inline estimator times it.
    pub fn on_ack(&mut self, now: Time, ack: u64, srtt: Option<Dur>, cwnd: f64) {
        if let Some(s) = srtt.filter(|s| !s.is_zero()) {
            self.srtt_min = Some(self.srtt_min.map_or(s, |m| m.min(s)));
        }
        let acked = ack.saturating_sub(self.cum_ack);
        self.cum_ack = self.cum_ack.max(ack);
        match &self.group {
            Some((g, me)) => aggregate::lock(g).on_acked(now, *me, acked, srtt, cwnd),
            None => self.ctl.on_acked(now, acked, srtt, cwnd),
        }
        if let PathSource::Inline(i) = &mut self.path {
            i.on_ack(now, ack, srtt);
        }
    }

    /// The "constant" baseline's fixed window `bw · srtt_min` (packets, at least 1), once an
    /// RTT is known; `None` for PTCP itself.
    pub fn constant_window(&self) -> Option<f64> {
        if !self.ctl.config().constant {
            return None;
        }
        let m = self.srtt_min?;
        Some((self.ctl.bw_pkts() * m.as_secs_f64()).max(1.0))
    }

    /// A retransmission timeout with segments up to `next_seq` (exclusive) outstanding: they
    /// are repaired before PTCP's `k` applies again, under [`AfterTimeout::Reno`].
    pub fn on_rto(&mut self, next_seq: u64) {
        if self.ctl.config().after_timeout == AfterTimeout::Reno {
            self.timeout_recover = Some(next_seq);
        }
    }

    /// Whether an ACK in congestion avoidance gets Reno's increase rather than Eq. 1 with
    /// PTCP's `k`: a timeout's losses are still being repaired (the cumulative ACK `cum_ack`,
    /// the next segment expected, is short of the segments outstanding at the timeout). Records
    /// `k = 1` for the time series.
    pub fn repairing_timeout(&mut self, cum_ack: u64) -> bool {
        match self.timeout_recover {
            Some(r) if cum_ack < r => {
                self.k = 1.0;
                true
            }
            Some(_) => {
                self.timeout_recover = None;
                false
            }
            None => false,
        }
    }

    /// The `k` of Eq. 1 for an ACK in congestion avoidance.
    pub fn increase(&mut self, now: Time, cwnd: f64) -> f64 {
        let est = self.path.estimate();
        self.k = match &self.group {
            Some((g, me)) => aggregate::lock(g).increase(now, *me, cwnd, est),
            None => self.ctl.increase(now, cwnd, est),
        };
        self.k
    }

    /// The TCP cut its window (a fast retransmit, or a timeout when `timeout`).
    pub fn on_cut(&mut self, timeout: bool) {
        match &self.group {
            Some((g, me)) => aggregate::lock(g).on_cut(*me, timeout),
            None => self.ctl.on_cut(timeout),
        }
    }

    /// A new data segment was sent (`a_j`, or `a_j^sum` in an aggregate).
    pub fn on_data_sent(&mut self, now: Time) {
        match &self.group {
            Some((g, me)) => aggregate::lock(g).on_data_sent(now, *me),
            None => self.ctl.on_data_sent(),
        }
    }

    /// The connection's transfer is done (a short-lived connection closing, 001 Sec. 3.3.2):
    /// a member leaves its aggregate's `N_pm` until it sends new data again
    /// ([`super::aggregate::Aggregate::close`]); nothing for a connection on its own.
    pub fn close(&mut self) {
        if let Some((g, me)) = &self.group {
            aggregate::lock(g).close(*me);
        }
    }

    /// Make this connection a member of an aggregate (001 Sec. 2.3); from now on the
    /// aggregate's controller sets its increase.
    pub fn join(&mut self, group: AggregateHandle) {
        let me = aggregate::lock(&group).join();
        self.group = Some((group, me));
    }

    /// The aggregate this connection belongs to, if any.
    pub fn group(&self) -> Option<&AggregateHandle> {
        self.group.as_ref().map(|(g, _)| g)
    }

    /// The last `k` applied to this connection's window.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The control slot length `s` in force (the aggregate's for a member).
    pub fn s(&self) -> u32 {
        match &self.group {
            Some((g, _)) => aggregate::lock(g).ctl().s(),
            None => self.ctl.s(),
        }
    }

    /// A copy of the controller that judges this connection's slots: its own, or its
    /// aggregate's (for reports at the end of a run, not per packet).
    pub fn controller(&self) -> Ptcp {
        match &self.group {
            Some((g, _)) => aggregate::lock(g).ctl().clone(),
            None => self.ctl.clone(),
        }
    }

    /// The sender's next packet: the inline estimator paces its probe streams, anything else
    /// goes out in order.
    pub fn poll(&mut self, now: Time, out: &mut VecDeque<Packet>) -> Option<Packet> {
        match &mut self.path {
            PathSource::Inline(i) => i.poll(now, out),
            PathSource::Oracle(_) => out.pop_front(),
        }
    }

    /// When a held queue must be polled again.
    pub fn next_release(&self) -> Option<Time> {
        match &self.path {
            PathSource::Inline(i) => i.next_release(),
            PathSource::Oracle(_) => None,
        }
    }

    /// The sender's retransmission timer expired.
    pub fn on_timeout(&mut self, now: Time) {
        if let PathSource::Inline(i) = &mut self.path {
            i.on_timeout(now);
        }
    }

    /// The driver's oracle measurement: the control input with the oracle estimator, a
    /// reference to compare against with the inline one.
    pub fn set_oracle(&mut self, now: Time, available: f64, capacity: f64) {
        match &mut self.path {
            PathSource::Oracle(o) => o.set(now, available, capacity),
            PathSource::Inline(_) => self.reference.set(now, available, capacity),
        }
    }

    /// The `A` and `P` the controller uses now.
    pub fn estimate(&self) -> Option<PathEstimate> {
        self.path.estimate()
    }

    /// The oracle's values, whichever estimator controls (`None` if the driver has none).
    pub fn oracle(&self) -> Option<PathEstimate> {
        match &self.path {
            PathSource::Oracle(o) => o.estimate(),
            PathSource::Inline(_) => self.reference.estimate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn ptcp(bw_mbps: u64) -> Ptcp {
        Ptcp::new(
            PtcpConfig {
                bw: Rate::from_mbps(bw_mbps),
                ..PtcpConfig::default()
            },
            1000,
        )
    }

    fn started(bw_mbps: u64) -> Ptcp {
        let mut p = ptcp(bw_mbps);
        p.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 40.0);
        p
    }

    fn started_with(bw_mbps: u64, reserve: u32) -> Ptcp {
        started_with_guard(bw_mbps, reserve, Eq2Guard::default())
    }

    fn started_with_guard(bw_mbps: u64, reserve: u32, guard: Eq2Guard) -> Ptcp {
        let mut p = Ptcp::new(
            PtcpConfig {
                bw: Rate::from_mbps(bw_mbps),
                eq2_reserve: reserve,
                eq2_guard: guard,
                ..PtcpConfig::default()
            },
            1000,
        );
        p.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 40.0);
        p
    }

    #[test]
    fn eq2_with_the_prose_reserve_plans_one_round_less() {
        // The default (prose, 001 Sec. 2.2.1): m = s − n − 2. s = 16, srtt = 25 ms,
        // g = 2500 pkt/s, n = 0, a = 0, cwnd = 40: k = 2·(1000 − 14·40)/(14·15) = 880/210.
        let p = started_with(20, 2);
        assert!((p.eq2(Time(10 * MS), 40.0) - 880.0 / 210.0).abs() < 1e-9);
        // n = 14: m = 0, no round left while 1000 packets are needed: k_bw = +∞, k = k_max.
        assert_eq!(p.eq2(Time(355 * MS), 40.0), f64::INFINITY);
    }

    #[test]
    fn eq2_counts_sent_or_acked_packets_as_configured() {
        // s = 16, srtt = 25 ms, g = 2500 pkt/s: the slot needs 1000 packets. 300 sent and 240
        // acknowledged at 100 ms (n = 4, m = 16 − 4 − 2 = 10), cwnd = 60.
        let run = |count: Eq2Count| {
            let mut p = Ptcp::new(
                PtcpConfig {
                    eq2_count: count,
                    ..PtcpConfig::default()
                },
                1000,
            );
            p.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 60.0);
            for _ in 0..300 {
                p.on_data_sent();
            }
            p.on_acked(Time(100 * MS), 240, Some(Dur::from_millis(25)), 60.0);
            p.eq2(Time(100 * MS), 60.0)
        };
        // sent (the default, 001's "transmitted"): 2·(1000 − 300 − 10·60)/(10·11) = 200/110.
        assert!((run(Eq2Count::Sent) - 200.0 / 110.0).abs() < 1e-9);
        assert_eq!(PtcpConfig::default().eq2_count, Eq2Count::Sent);
        // acked: the 60 in flight still count as needed: 2·(1000 − 240 − 600)/110 = 320/110.
        assert!((run(Eq2Count::Acked) - 320.0 / 110.0).abs() < 1e-9);
        let c: PtcpConfig = toml::from_str("eq2_count = \"acked\"").unwrap();
        assert_eq!(c.eq2_count, Eq2Count::Acked);
    }

    #[test]
    fn eq2_matches_the_worked_example() {
        // spec 001 §2.4 (the printed Eq. 2, reserve 1): s = 16, srtt = 25 ms, g = 2500 pkt/s,
        // n = 0, a = 0, cwnd = 40: k_bw = 2·(1000 − 15·40)/(15·16) = 800/240.
        let p = started_with(20, 1);
        assert_eq!(p.bw_pkts(), 2500.0);
        assert!((p.eq2(Time(10 * MS), 40.0) - 800.0 / 240.0).abs() < 1e-9);
        // n = 3 (75..100 ms into the slot), 300 packets sent: m = 12,
        // k = 2·(1000 − 300 − 12·40)/(12·13) = 440/156.
        let mut p = p;
        for _ in 0..300 {
            p.on_data_sent();
        }
        assert!((p.eq2(Time(80 * MS), 40.0) - 440.0 / 156.0).abs() < 1e-9);
    }

    #[test]
    fn eq2_guards_the_last_round_of_the_slot() {
        // n = 15 = s − 1 and beyond: the printed denominator is 0 or negative. `one_round`
        // (m = 1) asks for the whole remaining need next round: k = need − cwnd.
        let mut p = started_with_guard(20, 1, Eq2Guard::OneRound);
        for _ in 0..900 {
            p.on_data_sent();
        }
        for t in [376, 399] {
            let k = p.eq2(Time(t * MS), 40.0);
            assert!((k - (100.0 - 40.0)).abs() < 1e-9, "t = {t} ms: {k}");
        }
        assert!(p.eq2(Time(390 * MS), 40.0).is_finite());
        // `k_max` (the default): the formula's limit, +∞ while packets are needed, so the
        // bounds give k = k_max; with nothing needed, as `one_round` (no −∞).
        let mut p = started_with_guard(20, 1, Eq2Guard::KMax);
        for _ in 0..900 {
            p.on_data_sent();
        }
        assert_eq!(p.eq2(Time(376 * MS), 40.0), f64::INFINITY);
        assert_eq!(p.bound(p.eq2(Time(376 * MS), 40.0), 7.5), 7.5);
        assert_eq!(p.bound(p.eq2(Time(376 * MS), 40.0), -3.0), 1.0);
        // Earlier in the slot the formula is untouched: n = 14, m = 1, k = need − cwnd.
        assert!((p.eq2(Time(360 * MS), 40.0) - (100.0 - 40.0)).abs() < 1e-9);
        for _ in 0..150 {
            p.on_data_sent();
        }
        let k = p.eq2(Time(376 * MS), 40.0);
        assert!((k - (-50.0 - 40.0)).abs() < 1e-9, "{k}");
    }

    #[test]
    fn eq3_and_the_bound_precedence() {
        // spec 001 §2.5: A = 500 pkt/s, srtt = 25 ms, cwnd = 40: k_max = 12.5 − 40 = −27.5;
        // k_min (1) wins over it.
        let mut p = started_with(20, 1);
        let est = PathEstimate {
            available: 500.0,
            capacity: 12_000.0,
        };
        assert_eq!(p.eq34(40.0, Some(est)), Some(-27.5));
        assert_eq!(p.increase(Time(10 * MS), 40.0, Some(est)), 1.0);
        // Plenty of room: A = 8000 pkt/s gives k_max = 160, so k = k_bw.
        let roomy = PathEstimate {
            available: 8000.0,
            capacity: 12_000.0,
        };
        let k = p.increase(Time(10 * MS), 40.0, Some(roomy));
        assert!((k - 800.0 / 240.0).abs() < 1e-9);
        // Ahead of target: k_bw < 1, and k_min holds Reno's increase.
        assert_eq!(p.increase(Time(10 * MS), 90.0, Some(roomy)), 1.0);
        // Without k_min, k follows k_bw below 1, even below 0.
        let mut c = Ptcp::new(
            PtcpConfig {
                k_min: false,
                eq2_reserve: 1,
                ..PtcpConfig::default()
            },
            1000,
        );
        c.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 40.0);
        let k = c.increase(Time(10 * MS), 90.0, Some(roomy));
        assert!((k - 2.0 * (1000.0 - 1350.0) / 240.0).abs() < 1e-9 && k < 0.0);
        // No estimate yet: k_max = k_min_value.
        assert_eq!(p.increase(Time(10 * MS), 10.0, None), 1.0);
    }

    /// Feed `n` ACKs of one packet spread evenly over `[from, to)`.
    fn acks(p: &mut Ptcp, from: u64, to: u64, n: u64) {
        for j in 0..n {
            let t = from + (to - from) * j / n;
            p.on_acked(Time(t), 1, Some(Dur::from_millis(25)), 40.0);
        }
    }

    #[test]
    fn shortfall_carries_into_the_next_target_and_selects_eq4() {
        // bw = 2500 pkt/s, s = 16, srtt = 25 ms: control slots of 400 ms, 2 per evaluation slot
        // of 800 ms. First slot: 800 packets in 400 ms = 2000 pkt/s, a 500 pkt/s shortfall.
        let mut p = started(20);
        acks(&mut p, 0, 400 * MS, 800);
        p.on_acked(Time(400 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        let c = p.ctrl_slots()[0];
        assert_eq!(p.eq34(40.0, None), None);
        assert!((c.tput - 2000.0).abs() < 1e-6 && c.target == 2500.0 && c.regime == Regime::Eq3);
        assert!((p.target() - 3000.0).abs() < 1e-6, "g_1 = bw + shortfall");
        assert_eq!(p.regime(), Regime::Eq4);
        assert_eq!(p.s(), 16, "a miss under Eq. 3 does not shrink s");
        // Eq. 4: min(A + g − tput_prev, P)·srtt − cwnd = min(500 + 1000, 12000)·0.025 − 40.
        let est = PathEstimate {
            available: 500.0,
            capacity: 12_000.0,
        };
        assert!((p.eq34(40.0, Some(est)).unwrap() - (1500.0 * 0.025 - 40.0)).abs() < 1e-9);
        let capped = PathEstimate {
            available: 500.0,
            capacity: 1200.0,
        };
        assert!((p.eq34(40.0, Some(capped)).unwrap() - (1200.0 * 0.025 - 40.0)).abs() < 1e-9);
        // Second slot also misses (under Eq. 4): s halves. It ends the evaluation slot:
        // 1600 packets in 800 ms = 2000 pkt/s < bw, and the target resets to bw.
        acks(&mut p, 400 * MS, 800 * MS, 800);
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        assert_eq!(p.s(), 8);
        let e = p.eval_slots()[0];
        assert!(!e.met && (e.tput - 2000.0).abs() < 1e-6);
        // The target resets to bw; the regime stays Eq. 4 because the previous control slot
        // missed (the prose's condition, see the module doc).
        assert_eq!((p.target(), p.regime()), (2500.0, Regime::Eq4));
    }

    #[test]
    fn a_surplus_is_carried_too_and_s_doubles_after_a_clean_evaluation_slot() {
        let mut p = started(20);
        // 1200 packets in the first 400 ms: 3000 pkt/s, so g_1 = 2000.
        acks(&mut p, 0, 400 * MS, 1200);
        p.on_acked(Time(400 * MS), 0, Some(Dur::from_millis(25)), 80.0);
        assert!((p.target() - 2000.0).abs() < 1e-6);
        assert_eq!(p.regime(), Regime::Eq3);
        // Second slot meets g_1 under Eq. 3 and cwnd (80) ≥ bw·srtt (62.5): s doubles to 32.
        acks(&mut p, 400 * MS, 800 * MS, 1000);
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 80.0);
        assert!(p.eval_slots()[0].met);
        assert_eq!(p.s(), 32);
        // s never exceeds e.
        acks(&mut p, 800 * MS, 1600 * MS, 3000);
        p.on_acked(Time(1600 * MS), 0, Some(Dur::from_millis(25)), 80.0);
        assert_eq!(p.s(), 32);
    }

    #[test]
    fn s_can_shrink_from_e_when_every_evaluation_slot_is_one_control_slot() {
        // s = e: one control slot per evaluation slot, each starting afresh. A miss makes the
        // next slot Eq. 4 (previous control slot missed), and a miss there halves s.
        let mut p = Ptcp::new(
            PtcpConfig {
                s_init: 32,
                ..PtcpConfig::default()
            },
            1000,
        );
        p.on_acked(Time::ZERO, 0, Some(Dur::from_millis(25)), 40.0);
        acks(&mut p, 0, 800 * MS, 800);
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        assert_eq!((p.s(), p.regime()), (32, Regime::Eq4));
        acks(&mut p, 800 * MS, 1600 * MS, 800);
        p.on_acked(Time(1600 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        assert_eq!(p.s(), 16);
    }

    #[test]
    fn s_does_not_grow_when_the_window_is_below_bw_srtt() {
        let mut p = started(20);
        acks(&mut p, 0, 800 * MS, 2400);
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        assert!(p.eval_slots()[0].met);
        assert_eq!(p.s(), 16, "cwnd 40 < bw·srtt = 62.5");
    }

    #[test]
    fn slots_keep_the_last_srtt_while_the_sender_has_none() {
        // After a long back-off the sender's RTT estimator forgets its sRTT (`srtt = None`)
        // until a new sample. The ACKs in that gap still count, and the slot clock keeps
        // running on the last sRTT (25 ms: control slots of 400 ms, evaluation slots of 800 ms)
        // instead of stalling (ACKs dropped) or collapsing (zero-length slots).
        let mut p = started(20);
        for j in 0..800u64 {
            p.on_acked(Time(j * MS / 2), 1, None, 40.0);
        }
        // 800 packets acknowledged with no sRTT in the first 400 ms: none lost.
        p.on_acked(Time(400 * MS), 0, None, 40.0);
        let c = p.ctrl_slots();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].start, c[0].end), (Time::ZERO, Time(400 * MS)));
        assert!((c[0].tput - 2000.0).abs() < 1e-6, "{}", c[0].tput);
        // The next boundary is again 16 × 25 ms later, and the evaluation slot ends at 800 ms.
        p.on_acked(Time(799 * MS), 1, None, 40.0);
        assert_eq!(p.ctrl_slots().len(), 1);
        p.on_acked(Time(800 * MS), 0, None, 40.0);
        assert_eq!(p.ctrl_slots().len(), 2);
        let e = p.eval_slots();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].end, Time(800 * MS));
        assert!((e[0].tput - 801.0 / 0.8).abs() < 1e-6, "{}", e[0].tput);
        // A zero sRTT is no sample either.
        p.on_acked(Time(1200 * MS), 0, Some(Dur::ZERO), 40.0);
        assert_eq!(p.ctrl_slots().len(), 3);
        assert_eq!(p.ctrl_slots()[2].end, Time(1200 * MS));
        // Before any sRTT at all nothing starts.
        let mut q = ptcp(20);
        q.on_acked(Time(MS), 5, None, 10.0);
        assert!(!q.started());
    }

    #[test]
    fn each_control_slot_records_the_bound_that_set_k() {
        let mut p = started(20);
        assert_eq!(p.binding(5.0, 10.0), Bound::KBw);
        assert_eq!(p.binding(5.0, 3.0), Bound::KMax);
        assert_eq!(p.binding(0.5, 3.0), Bound::KMin);
        assert_eq!(
            p.binding(5.0, -27.5),
            Bound::KMin,
            "k_min wins over a negative k_max"
        );
        // First control slot (0-400 ms, Eq. 3): A = 4000 pkt/s, srtt = 25 ms, cwnd = 40 gives
        // k_max = 60; Eq. 2 at n = 0, a = 0 gives 2·(1000 − 14·40)/(14·15) = 4.19 < 60.
        let roomy = Some(PathEstimate {
            available: 4000.0,
            capacity: 12_000.0,
        });
        for _ in 0..3 {
            assert!((p.increase(Time(MS), 40.0, roomy) - 880.0 / 210.0).abs() < 1e-9);
        }
        // A = 500 pkt/s: k_max = 12.5 − 40 < 0, so k_min sets k.
        let busy = Some(PathEstimate {
            available: 500.0,
            capacity: 12_000.0,
        });
        assert_eq!(p.increase(Time(2 * MS), 40.0, busy), 1.0);
        p.on_acked(Time(400 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        let c = p.ctrl_slots()[0];
        assert_eq!(c.bound_counts, [3, 0, 1]);
        assert_eq!(c.bound_by, Some(Bound::KBw));
        // The k_min ACK had k_max (−27.5) below k_bw (4.19): k_min overrode the cap.
        assert_eq!(c.k_min_over_k_max, 1);
        // The next slot (Eq. 4 after the miss) had no congestion-avoidance ACK at all.
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        let c = p.ctrl_slots()[1];
        assert_eq!(
            (c.regime, c.bound_by, c.bound_counts),
            (Regime::Eq4, None, [0; 3])
        );
        // Ties go to the earlier of k_bw, k_max, k_min.
        assert_eq!(dominant([0, 2, 2]), Some(Bound::KMax));
        assert_eq!(dominant([1, 0, 1]), Some(Bound::KBw));
    }

    #[test]
    fn window_cuts_are_counted_per_control_and_evaluation_slot() {
        let mut p = started(20);
        p.on_cut(false);
        p.on_cut(false);
        p.on_cut(true);
        p.on_acked(Time(400 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        p.on_cut(false);
        p.on_acked(Time(800 * MS), 0, Some(Dur::from_millis(25)), 40.0);
        assert_eq!(p.ctrl_slots()[0].cuts, [2, 1]);
        assert_eq!(p.ctrl_slots()[1].cuts, [1, 0]);
        assert_eq!(p.eval_slots()[0].cuts, [3, 1]);
    }

    #[test]
    fn eval_end_by_time_cuts_the_last_control_slot_and_by_ctrl_slots_does_not() {
        // e = 4, s = 2: two control slots of 2 sRTTs. The sRTT is 25 ms at the start and 30 ms
        // from the second control slot on.
        let run = |end: EvalEnd| {
            let mut p = Ptcp::new(
                PtcpConfig {
                    e: 4,
                    s_init: 2,
                    eval_end: end,
                    ..PtcpConfig::default()
                },
                1000,
            );
            let srtt = |ms| Some(Dur::from_millis(ms));
            p.on_acked(Time::ZERO, 0, srtt(25), 40.0);
            p.on_acked(Time(50 * MS), 0, srtt(30), 40.0);
            p.on_acked(Time(100 * MS), 0, srtt(30), 40.0);
            p.on_acked(Time(110 * MS), 0, srtt(30), 40.0);
            p
        };
        // `time`: the evaluation slot is 4 × 25 ms; the second control slot (60 ms planned) is
        // cut at 100 ms.
        let p = run(EvalEnd::Time);
        assert_eq!(p.eval_slots()[0].end, Time(100 * MS));
        assert_eq!(p.ctrl_slots()[1].end, Time(100 * MS));
        // `ctrl_slots`: it ends with its second whole control slot, at 50 + 2 × 30 ms.
        let p = run(EvalEnd::CtrlSlots);
        assert_eq!(p.eval_slots()[0].end, Time(110 * MS));
        assert_eq!(p.ctrl_slots().len(), 2);
        assert_eq!(p.ctrl_slots()[1].end, Time(110 * MS));
    }

    /// A control slot cut short by its evaluation slot's end plans Eq. 2 over what is left: the
    /// packets `g·(cut length)` and `cut length / srtt_i` rounds, not `s` whole RTTs.
    #[test]
    fn eq2_plans_a_cut_control_slot_over_its_cut_length() {
        // e = 8, s = 4: the evaluation slot is 8 × 25 ms = 200 ms. The sRTT is 30 ms from the
        // second control slot on, which starts at 100 ms and is cut from 120 ms to 100 ms.
        let mut p = Ptcp::new(
            PtcpConfig {
                e: 8,
                s_init: 4,
                eq2_reserve: 1,
                ..PtcpConfig::default()
            },
            1000,
        );
        let srtt = |ms| Some(Dur::from_millis(ms));
        p.on_acked(Time::ZERO, 0, srtt(25), 40.0);
        p.on_acked(Time(100 * MS), 0, srtt(30), 40.0);
        assert_eq!(p.ctrl_slots().len(), 1);
        let g = p.g;
        let plan = 100.0 / 30.0;
        assert!((p.s_plan - plan).abs() < 1e-9, "{}", p.s_plan);
        // At the slot's start (n = 0, a = 0): m = plan − 1 = 2.33 rounds for g·0.1 s packets.
        let m = plan - 1.0;
        let want = 2.0 * (g * 0.03 * plan - m * 10.0) / (m * (m + 1.0));
        let got = p.eq2(Time(100 * MS), 10.0);
        assert!((got - want).abs() < 1e-9, "{got} against {want}");
        // The uncut plan (3 rounds for g·0.12 s packets) asks for a slower climb: the cut
        // slot has fewer packets to send but fewer rounds still to send them in.
        let uncut = 2.0 * (g * 0.03 * 4.0 - 3.0 * 10.0) / (3.0 * 4.0);
        assert!(
            (uncut - 95.0).abs() < 1e-9 && got > uncut + 20.0,
            "{uncut} against {got}"
        );
    }

    #[test]
    fn s_halves_down_to_s_min_only() {
        let mut p = started(20);
        // Starve it: every control slot misses; after the first miss each one is under Eq. 4.
        let mut t = 0;
        for _ in 0..40 {
            t += 50 * MS;
            p.on_acked(Time(t), 1, Some(Dur::from_millis(25)), 40.0);
        }
        assert_eq!(p.s(), 2);
        let seq: Vec<u32> = p.s_changes().iter().map(|c| c.1).collect();
        assert_eq!(seq, vec![16, 8, 4, 2]);
    }

    #[test]
    fn config_reads_from_params_and_validates() {
        let c: PtcpConfig =
            toml::from_str("bw = \"10Mbps\"\ne = 32\nk_min = false\nestimator = \"oracle\"")
                .unwrap();
        assert_eq!(c.bw, Rate::from_mbps(10));
        assert_eq!(c.estimator, EstimatorKind::Oracle);
        assert!(!c.k_min);
        assert_eq!(c.validate(), Ok(()));
        let bad = PtcpConfig {
            s_init: 64,
            ..PtcpConfig::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("s_init"));
        assert!(toml::from_str::<PtcpConfig>("kmin = 1").is_err());
        let c: PtcpConfig =
            toml::from_str("eq2_guard = \"one_round\"\neval_end = \"ctrl_slots\"").unwrap();
        assert_eq!(
            (c.eq2_guard, c.eval_end),
            (Eq2Guard::OneRound, EvalEnd::CtrlSlots)
        );
        assert_eq!(
            (
                PtcpConfig::default().eq2_guard,
                PtcpConfig::default().eval_end
            ),
            (Eq2Guard::KMax, EvalEnd::Time)
        );
    }
}
