//! TTFWC, Tunable TFWC (000): a sender-only congestion control for the TCP sender that replaces
//! Reno's per-ACK increase (`cong_avoid`) and on-loss decrease (`ssthresh`) with TFWC's
//! equation-based window plus a one-time boost scaled by the tuning parameter `tp`.
//!
//! This is the spec's "consistent reference algorithm" (spec 000 §2.6), that is the Linux module
//! of 000 Ch. 4 (Figs 4.4–4.6) with the printed-code defects of spec 000 §2.5 fixed:
//!
//! - **#1** the boost fires on the *first* packet of the increasing period (`count == 1`; the
//!   printed `count == 0` can never hold);
//! - **#2** the window grows only in the increasing period and only at the ALI cadence (the
//!   printed `goto common` in both branches would grow it on every ACK);
//! - **#3/#4** the first loss sets the window to Reno's half (the printed code never assigns it);
//! - **#5** `li_dif`, the open-interval length at which the increasing period starts, is
//!   recomputed from the shared history after *every* loss event as the smallest `I0` with
//!   `ALI_incl(I0) > ALI_excl` (not `li_mean / 100`, and not only at the first loss);
//! - **#7** the Eq. 3.1 decrease fraction is `ε = 1 − W_new / W_prev` of the *equation* windows:
//!   the previous equation window (`tcp_cwnd`) never contained the boost, so subtracting `alpha`
//!   from it again, as printed, would double-count it;
//! - **#8** kept as the reference algorithm has it (the shadow is re-initialised only at the
//!   midpoint of the flat period, and halved only when the boost gate is evaluated). `alpha`
//!   changes only where the thesis' code changes it, inside `ttfwc_alpha_cwnd` (000 Fig. 4.6):
//!   when a loss comes before the shadow has passed TFWC (Fig. 4.5 line 30 false) the gate is
//!   not evaluated and the last boost carries over to the next increasing period, as printed
//!   and as spec 000 §2.6 has it. Fig. 3.3's "behaves exactly like TFWC" is the case of
//!   Eq. 3.1 evaluated and false, which does reset it. (An earlier version reset `alpha` on
//!   every loss; with it the boost fired once in 394 loss events of the closed-loop test.)
//!   Entering Reno mode leaves it alone, as Fig. 4.5 does (an earlier version reset it there;
//!   on the 8 + 8 dumbbell Reno mode is entered in under 1 % of the loss events and the
//!   difference did not show, docs/reproductions/log/ttfwc.md, audit of 2026-11-26).
//! - Windows are whole packets as in the kernel (`u32`, [`TtfwcConfig::integer_windows`]):
//!   the equation window, the halvings, `dthresh` and the boost are truncated. The shadow
//!   Reno window grows as Linux' `tcp_cong_avoid_ai` does, one per `reno_cwnd + 1` packets
//!   (Fig. 4.4 lines 20–25).
//! - After a retransmission timeout the sender slow-starts back to `ssthresh` as Reno does
//!   (000 Sec. 4.1, "timeout behaviours are the same as RENO"; spec 000 §2.7): the printed
//!   `cong_avoid` has no such path once a history exists.
//!
//! # Counting unit
//!
//! The open interval `I0` counts **packets newly acknowledged** by ACKs that reach the
//! congestion-avoidance hook, not ACK events as the kernel does (spec 000 §2.6, §6 item 11): a
//! loss interval is then the packet count the equation expects, whatever the sink's ACK policy.
//! With the ns-2 sink the theses use (one ACK per segment, 003 §5) both units coincide, so the
//! kernel's 6/3 cadence applies unchanged as "packets per +1 ALI". ACKs during a recovery or
//! ending one do not reach the window hook (as Linux' `tcp_may_raise_cwnd`, spec 000 §2.7), but
//! the packets they acknowledge are still counted ([`Ttfwc::on_recovery_acked`]): without them
//! every interval would come out about one window short (88 instead of 100 packets at a periodic
//! 1/100 loss with a 40-segment pipe), biasing the window low. This follows the thesis' text
//! (Sec. 2.2) against its code; [`TtfwcConfig::count_recovery`] `= false` is the kernel's
//! count. Because such an ACK can move `I0` by a whole window, the shadow's start (the
//! midpoint) and the boost (the first packet of the increasing period) fire on the first
//! packet at or past their point, once per epoch.
//!
//! [`TtfwcConfig::count_unit`] `= "ack-events"` counts as the kernel does instead, one per ACK
//! ([`CountUnit::AckEvents`]); with per-segment ACKs the two differ only at an ACK that covers
//! several segments (the one ending a recovery, one after a lost ACK).
//!
//! # Exact versus approximate ALI
//!
//! The loss history is always the shared [`LossHistory`] (`AliConfig::ttfwc`), which gives the
//! exact ALI at each loss event. During the increasing period the kernel does not recompute it
//! but adds 1 every 6 (smooth) or 3 (responsive) ACKs (000 Sec. 4.1, cost +0.78 µs per call);
//! [`AliUpdate`] chooses between that and the exact `max(ALI_incl, ALI_excl)` per ACK.
//!
//! # cwnd jitter (the ns-2 model)
//!
//! 000 runs its simulations (Sec. 5.1) with an ns-2 TTFWC agent it does not describe (spec 000
//! C2) and says "when the tuning parameter is 0.0, TTFWC is equivalent to the original TFWC"
//! (Sec. 5.1): 002's TFWC, whose ns-2 agent inflates its window by one packet on 10 % of the ACKs
//! and at least once per RTT (002 Sec. 3.2.7) because without it a smooth window on a DropTail
//! queue locks into a phase with the departures and sees almost no loss while the other flows see
//! all of it. Without the jitter the same lock-out happens here: on the 000 dumbbell (15 Mb/s,
//! DropTail, 4 + 4 flows) one TTFWC flow took 11.7 Mb/s with 20 losses in 234 000 packets while
//! the link dropped 0.7 % and the TCP flows 6–7 %. So the simulations' TTFWC carries 002's
//! jitter ([`TtfwcConfig::jitter`], on by default); the Linux module of 000 Ch. 4 has none
//! (`jitter = false` models it). The inflation borrows the next packet (the window is one larger
//! until the next ACK recomputes it), it never raises the window the equation gives.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use serde::Deserialize;

use crate::equation::Equation;
use crate::loss_history::{AliConfig, LossEstimator, LossHistory};
use crate::time::{Dur, Time};

/// How the ALI moves between loss events in the increasing period (000 Sec. 4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AliUpdate {
    /// The kernel's approximation: ALI += 1 every [`TtfwcConfig::cadence_smooth`] or
    /// [`TtfwcConfig::cadence_responsive`] packets of the increasing period.
    #[default]
    Approximate,
    /// `max(ALI_incl, ALI_excl)` from the shared history on every ACK of the increasing period.
    Exact,
}

/// The window Eq. 3.1's decrease fraction `ε = 1 − W_new / base` is taken from (spec 000 §2.5
/// #7, "decide, and document").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EpsBase {
    /// The previous equation window, the code's `tcp_cwnd` (000 Fig. 4.6 line 12): it excludes
    /// the growth of the increasing period, so a loss after it gives ε ≤ 0 and no boost.
    #[default]
    EquationWindow,
    /// The window at the loss less this epoch's boost, as Sec. 3.2's prose defines ε ("the
    /// cwnd decrease fraction after the packet loss event", Fig. 3.1) and as the code's
    /// `cwnd − alpha_cwnd` (line 10) suggests was meant.
    WindowAtLoss,
    /// Fig. 4.6 lines 9–12 as printed: the previous equation window `tcp_cwnd` less the boost
    /// in force (`alpha_cwnd`, carried over or not applied this epoch) when there is one. The
    /// equation window never contained the boost (spec 000 §2.5 #7), so this shrinks the base
    /// and makes ε ≤ 0, no boost, likelier after a boost; a base of 0 or less (the kernel's
    /// `u32` would divide by zero or wrap) gives no boost.
    EquationWindowLessBoost,
}

/// What one step of the open interval `I0` is (spec 000 §2.6 "Units", §6 item 11: "pick one and
/// record it").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountUnit {
    /// Packets newly acknowledged (the thesis' definition of a loss interval, 000 Sec. 2.2,
    /// "the number of packets successfully arriving at the receiver"). With one ACK per
    /// segment, as the theses' ns-2 sink sends, this is the same as [`CountUnit::AckEvents`].
    #[default]
    Packets,
    /// One per ACK that reaches the hook, as the Linux module counts: `li_length[0]++` once per
    /// `ttfwc_cong_avoid` call (000 Fig. 4.4 lines 10 and 27; spec 000 §2.4), whatever the ACK
    /// covers. The open interval and its flat/increasing test against `li_dif`, the 6/3 cadence
    /// (`count % 6`, `count % 3`), the shadow Reno counter (`snd_cwnd_cnt`, lines 20–24) and the
    /// loss intervals closed into the history are all in ACK events, as the kernel's
    /// `li_length[]` is. The equation takes the ALI so counted as it is, as the printed code
    /// does (`ttfwc_calc_x(ttfwc_invert_imean(li_mean))`, Fig. 4.4 lines 38–39 and Fig. 4.5
    /// line 23: no packets-per-ACK factor anywhere), and the first loss seeds the history with
    /// the equation's pseudo-interval (`pseudo_li_calc`, Fig. 4.5 line 13) unconverted. With
    /// delayed ACKs (about two packets per ACK event) every closed interval is about half its
    /// packet count, `p = 1/ALI` about twice the packet loss event rate, and the window about
    /// `W(2p) ≈ W(p)/√2`: Eq. 2.1's first term `1/√(2p'/3)` at `p' = 2p` is Padhye's `b = 2`
    /// term `1/√(2bp/3)` (delayed-ACK Reno), so to first order the kernel's module is
    /// TCP-friendly to a delayed-ACK Reno; the timeout term differs (it sees `2p`, not `p`).
    /// The flat period lasts `li_dif` ACK events, twice as many packets.
    AckEvents,
}

/// TTFWC's parameters. Every default is the thesis' (000) value.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TtfwcConfig {
    /// The tuning parameter in [0, 1] (000 Sec. 3.1). 0.0 is TFWC (with Reno below a window of
    /// 2); 0.9 is the thesis' throughput-sensitive setting and the default, 0.4 its
    /// smoothness-sensitive one.
    pub tp: f64,
    /// `tp` at and above which the mode is responsive (000 Sec. 3.1: smooth `0 ≤ tp < 0.5`,
    /// responsive `0.5 ≤ tp`). The kernel treats tp = 5 (tenths) as responsive for the boost but
    /// smooth for the cadence (spec 000 §2.3); here one mode decides all three, so tp = 0.5 is
    /// responsive everywhere, as the text says.
    pub responsive_from: f64,
    /// Loss intervals in smooth mode, with Choi's `2/(i−1)` weights (000 Sec. 3.3, spec 000
    /// §2.1).
    pub history_smooth: usize,
    /// Loss intervals in responsive mode, with TFRC's weights (000 Sec. 3.3).
    pub history_responsive: usize,
    /// Exact or approximate ALI growth between loss events (000 Sec. 4.1).
    pub ali: AliUpdate,
    /// Smooth mode: packets (or ACK events, [`TtfwcConfig::count_unit`]) of the increasing
    /// period per +1 of the approximate ALI (000 Fig. 4.4, `count % 6`).
    pub cadence_smooth: u32,
    /// Responsive mode: packets per +1 of the approximate ALI (000 Fig. 4.4, `count % 3`).
    pub cadence_responsive: u32,
    /// Smooth mode: the boost needs a decrease fraction ε below this (Eq. 3.1 as coded,
    /// `dthresh > 81`, 000 Fig. 4.6).
    pub eps_max_smooth: f64,
    /// Responsive mode: the Eq. 3.1 threshold as coded (`dthresh > 72`, 000 Fig. 4.6).
    pub eps_max_responsive: f64,
    /// Which window ε is measured from ([`EpsBase`]).
    pub eps_base: EpsBase,
    /// The kernel's integer arithmetic (000 Figs. 4.2–4.6: every window is a `u32` in
    /// packets): the equation window is truncated (`ttfwc_calc_x` returns whole packets, as
    /// Choi's ns-2 TFWC agent does with `cwnd_ = (int) t_win_`), the first loss halves with
    /// `snd_cwnd >> 1`, the shadow halves with `>> 1`, `dthresh = next·100 / base` is truncated
    /// before the `> 72` / `> 81` tests, the boost `thresh·tp/10` (`thresh·tp²/100`) is
    /// truncated, and the window the hook works on is whole packets. `false` keeps every
    /// quantity real-valued; the window then steps +1 as soon as the equation exceeds it,
    /// so it sits up to one packet above W(p) where the kernel sits at or below it.
    pub integer_windows: bool,
    /// Count the packets acknowledged during a loss recovery in the open interval
    /// ([`Ttfwc::on_recovery_acked`]). The thesis defines a loss interval as "the number of
    /// packets successfully arriving at the receiver between two loss events" (000 Sec. 2.2),
    /// which counts them; the kernel counts only in `cong_avoid` (Fig. 4.4 line 10 and line
    /// 27), which Linux does not call during recovery (spec 000 §2.7), and spec 000 §2.6 does
    /// the same. Text and code disagree; the text's definition is kept (module doc), `false`
    /// is the kernel's count.
    pub count_recovery: bool,
    /// What the open interval counts ([`CountUnit`]): packets (the default, the thesis' text)
    /// or ACK events (the Linux module, spec 000 §2.6, §6 item 11).
    pub count_unit: CountUnit,
    /// Below this window the sender runs Reno (000 Sec. 3.4): a loss at a smaller cwnd leaves
    /// the history alone, an equation window at or below it switches the increase to Reno's.
    pub reno_below: f64,
    /// 002's cwnd jitter in the TTFWC phase (module doc; 002 Sec. 3.2.7): the ns-2 model's
    /// TFWC has it, the Linux module (000 Ch. 4) does not.
    pub jitter: bool,
    /// Probability of a one-packet inflation per ACK: 10 % (002 Sec. 3.2.7, "per AckVec"; the
    /// theses' ns-2 sink acknowledges every segment, so one ACK is one Ack Vector).
    pub jitter_probability: f64,
    /// At least one inflation per RTT, the "force inflater" (002 Sec. 3.2.7).
    pub jitter_force: bool,
    /// No jitter above this loss event rate: 25 % (002 Sec. 3.2.7).
    pub jitter_max_p: f64,
    /// No jitter when the ALI moved by more than this many packets within the RTT: 10
    /// (002 Sec. 3.2.7).
    pub jitter_max_ali_change: f64,
    /// Seed of the jitter draws; a driver derives it from its per-flow random stream.
    pub seed: u64,
}

impl Default for TtfwcConfig {
    fn default() -> Self {
        TtfwcConfig {
            tp: 0.9,                           // 000 Sec. 5.1, TTFWC(0.9)
            responsive_from: 0.5,              // 000 Sec. 3.1
            history_smooth: 16,                // 000 Sec. 3.3
            history_responsive: 8,             // 000 Sec. 3.3
            ali: AliUpdate::Approximate,       // 000 Sec. 4.1
            cadence_smooth: 6,                 // 000 Fig. 4.4
            cadence_responsive: 3,             // 000 Fig. 4.4
            eps_max_smooth: 0.19,              // 000 Fig. 4.6, dthresh > 81
            eps_max_responsive: 0.28,          // 000 Fig. 4.6, dthresh > 72
            eps_base: EpsBase::EquationWindow, // 000 Fig. 4.6 line 12
            integer_windows: true,             // 000 Figs. 4.2-4.6, u32 windows
            count_recovery: true,              // 000 Sec. 2.2
            count_unit: CountUnit::Packets,    // 000 Sec. 2.2
            reno_below: 2.0,                   // 000 Sec. 3.4
            jitter: true,                      // the ns-2 model, module doc
            jitter_probability: 0.1,           // 002 Sec. 3.2.7
            jitter_force: true,                // 002 Sec. 3.2.7
            jitter_max_p: 0.25,                // 002 Sec. 3.2.7
            jitter_max_ali_change: 10.0,       // 002 Sec. 3.2.7
            seed: 0,
        }
    }
}

impl TtfwcConfig {
    /// The field names, for a loader that reads them from a table shared with the TCP's own
    /// (`protocol = "ttfwc"` in a scenario).
    pub const FIELDS: &'static [&'static str] = &[
        "tp",
        "responsive_from",
        "history_smooth",
        "history_responsive",
        "ali",
        "cadence_smooth",
        "cadence_responsive",
        "eps_max_smooth",
        "eps_max_responsive",
        "eps_base",
        "integer_windows",
        "count_recovery",
        "count_unit",
        "reno_below",
        "jitter",
        "jitter_probability",
        "jitter_force",
        "jitter_max_p",
        "jitter_max_ali_change",
        "seed",
    ];

    /// The default configuration with tuning parameter `tp`.
    pub fn with_tp(tp: f64) -> TtfwcConfig {
        TtfwcConfig {
            tp,
            ..TtfwcConfig::default()
        }
    }

    /// Responsive mode (000 Sec. 3.1).
    pub fn responsive(&self) -> bool {
        self.tp >= self.responsive_from
    }

    /// Checks every field; the message names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name}: must lie in [0, 1], got {v}"))
            }
        };
        unit("tp", self.tp)?;
        unit("responsive_from", self.responsive_from)?;
        unit("eps_max_smooth", self.eps_max_smooth)?;
        unit("eps_max_responsive", self.eps_max_responsive)?;
        unit("jitter_probability", self.jitter_probability)?;
        unit("jitter_max_p", self.jitter_max_p)?;
        if !(self.jitter_max_ali_change.is_finite() && self.jitter_max_ali_change >= 0.0) {
            return Err(format!(
                "jitter_max_ali_change: must be a packet count of at least 0, got {}",
                self.jitter_max_ali_change
            ));
        }
        for (name, n) in [
            ("history_smooth", self.history_smooth),
            ("history_responsive", self.history_responsive),
        ] {
            if n == 0 || n > crate::loss_history::MAX_HISTORY {
                return Err(format!(
                    "{name}: must be in 1..={}, got {n}",
                    crate::loss_history::MAX_HISTORY
                ));
            }
        }
        if self.cadence_smooth == 0 || self.cadence_responsive == 0 {
            return Err("cadence_smooth: cadences must be at least 1 packet".into());
        }
        if !(self.reno_below.is_finite() && self.reno_below >= 1.0) {
            return Err(format!(
                "reno_below: must be a window of at least 1, got {}",
                self.reno_below
            ));
        }
        Ok(())
    }

    /// The shared history's configuration for this mode.
    fn ali_config(&self) -> AliConfig {
        let responsive = self.responsive();
        AliConfig {
            n: if responsive {
                self.history_responsive
            } else {
                self.history_smooth
            },
            ..AliConfig::ttfwc(!responsive)
        }
    }
}

/// What the sender should do with its window on an ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Increase {
    /// Reno's slow start or additive increase (before the first loss, in Reno mode, and in slow
    /// start after a timeout).
    Reno,
    /// The new TTFWC window.
    Set(f64),
}

/// What became of the boost gate at the loss events after the first (000 Fig. 4.5 line 30,
/// Fig. 4.6), for diagnosis: where the boost is decided and why it rarely fires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateCounts {
    /// Loss events after the first that updated the history with `tp > 0`.
    pub events: u64,
    /// Fig. 4.5 line 30 false: the shadow had not passed the equation window (the loss came
    /// before the flat period's midpoint); the gate is skipped and the boost carries over.
    pub skipped: u64,
    /// Fig. 4.6 line 5: the halved shadow is above the new equation window.
    pub shadow_above: u64,
    /// Fig. 4.6 line 13: no decrease of the window ε is measured from (`dthresh ≥ 100`).
    pub no_decrease: u64,
    /// Eq. 3.1 false: the decrease was too large (`dthresh ≤ 72` / `≤ 81`).
    pub too_large: u64,
    /// Eq. 3.1 true: a boost was set (it may truncate to 0 with integer windows).
    pub passed: u64,
}

/// TTFWC state of one sender (spec 000 §2.6; the kernel's `struct ttfwc`, 000 Fig. 4.2).
#[derive(Clone, Debug)]
pub struct Ttfwc {
    cfg: TtfwcConfig,
    responsive: bool,
    /// Packets per +1 of the approximate ALI.
    cadence: u64,
    eps_max: f64,
    eq: Equation,
    /// Loss intervals in packets; its open interval is the kernel's `li_length[0]`.
    lh: LossHistory,
    /// Loss events recorded (`li_counter`); losses at cwnd below [`TtfwcConfig::reno_below`]
    /// are not.
    events: u64,
    /// Reno mode (`is_reno`): the equation window was at or below `reno_below`.
    is_reno: bool,
    /// The last equation window (`tcp_cwnd`), never including the boost.
    w_tfwc: f64,
    /// The shadow Reno window (`reno_cwnd`) and its ACK counter.
    reno_shadow: f64,
    shadow_cnt: u64,
    /// The shadow was (re)started in this epoch (at the midpoint of the flat period).
    shadow_started: bool,
    /// The boost was applied in this epoch.
    boosted: bool,
    /// The boost of this epoch (`alpha_cwnd`): added once, and the growth target is W + alpha.
    alpha: f64,
    /// Open-interval length at which the increasing period starts (`li_dif`).
    li_dif: u64,
    /// The ALI the window follows (`li_mean`).
    ali: f64,
    boosts: u64,
    gate: GateCounts,
    /// The jitter's RTT round: its start, whether it inflated, the ALI at its start.
    jitter_start: Option<Time>,
    jitter_inflated: bool,
    jitter_ali: f64,
    rng: Pcg64Mcg,
}

impl Ttfwc {
    /// A fresh controller. Out-of-range values are repaired (sizes clamped), never a panic; use
    /// [`TtfwcConfig::validate`] to reject them.
    pub fn new(cfg: TtfwcConfig) -> Ttfwc {
        let mut cfg = cfg;
        cfg.history_smooth = cfg
            .history_smooth
            .clamp(1, crate::loss_history::MAX_HISTORY);
        cfg.history_responsive = cfg
            .history_responsive
            .clamp(1, crate::loss_history::MAX_HISTORY);
        if !(0.0..=1.0).contains(&cfg.tp) {
            cfg.tp = if cfg.tp > 1.0 { 1.0 } else { 0.0 };
        }
        let responsive = cfg.responsive();
        let lh = LossHistory::new(cfg.ali_config())
            .or_else(|_| LossHistory::new(AliConfig::ttfwc(!responsive)))
            .expect("the TTFWC preset history is valid");
        Ttfwc {
            responsive,
            cadence: u64::from(if responsive {
                cfg.cadence_responsive
            } else {
                cfg.cadence_smooth
            })
            .max(1),
            eps_max: if responsive {
                cfg.eps_max_responsive
            } else {
                cfg.eps_max_smooth
            },
            eq: Equation::pftk(),
            lh,
            events: 0,
            is_reno: false,
            w_tfwc: 0.0,
            reno_shadow: 0.0,
            shadow_cnt: 0,
            shadow_started: false,
            boosted: false,
            alpha: 0.0,
            li_dif: 0,
            ali: 0.0,
            boosts: 0,
            gate: GateCounts::default(),
            jitter_start: None,
            jitter_inflated: false,
            jitter_ali: 0.0,
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            cfg,
        }
    }

    pub fn config(&self) -> &TtfwcConfig {
        &self.cfg
    }

    /// Responsive mode (tp ≥ 0.5).
    pub fn responsive(&self) -> bool {
        self.responsive
    }

    /// The shared loss history.
    pub fn history(&self) -> &LossHistory {
        &self.lh
    }

    /// Loss events recorded in the history.
    pub fn loss_events(&self) -> u64 {
        self.events
    }

    /// In Reno mode (000 Sec. 3.4).
    pub fn is_reno(&self) -> bool {
        self.is_reno
    }

    /// The last equation window, without the boost.
    pub fn equation_window(&self) -> f64 {
        self.w_tfwc
    }

    /// The shadow Reno window.
    pub fn reno_shadow(&self) -> f64 {
        self.reno_shadow
    }

    /// This epoch's boost.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Boosts applied so far.
    pub fn boosts(&self) -> u64 {
        self.boosts
    }

    /// How the boost gate was decided at each loss event.
    pub fn gate_counts(&self) -> GateCounts {
        self.gate
    }

    /// The open-interval length at which the increasing period starts.
    pub fn li_dif(&self) -> u64 {
        self.li_dif
    }

    /// The ALI the window follows.
    pub fn ali(&self) -> f64 {
        self.ali
    }

    /// The cwnd jitter for this ACK (module doc; 002 Sec. 3.2.7): whether the send window is one
    /// packet larger until the next ACK. Call once per ACK that [`Self::cong_avoid`] answered
    /// with [`Increase::Set`]; `srtt` bounds the round of the force inflater.
    pub fn jitter(&mut self, now: Time, srtt: Option<Dur>) -> bool {
        if !self.cfg.jitter || self.ali <= 0.0 {
            return false;
        }
        let start = *self.jitter_start.get_or_insert(now);
        if self.jitter_ali <= 0.0 {
            self.jitter_ali = self.ali;
        }
        let allowed = 1.0 / self.ali <= self.cfg.jitter_max_p
            && (self.ali - self.jitter_ali).abs() <= self.cfg.jitter_max_ali_change;
        let draw = crate::uniform::unit(&mut self.rng);
        let mut inflate = allowed && draw < self.cfg.jitter_probability;
        self.jitter_inflated |= inflate;
        if srtt.is_some_and(|r| now.saturating_since(start) > r) {
            // The force inflater at the end of each RTT.
            if allowed && self.cfg.jitter_force && !self.jitter_inflated {
                inflate = true;
            }
            self.jitter_start = Some(now);
            self.jitter_inflated = false;
            self.jitter_ali = self.ali;
        }
        inflate
    }

    /// The kernel's boost: `tp·δ` responsive, `tp²·δ` smooth (000 Sec. 3.2; Fig. 4.6 lines
    /// 18 and 20, `thresh·tp/10` and `thresh·tp²/100` with `tp` in tenths, truncated with
    /// [`TtfwcConfig::integer_windows`]).
    fn boost(&self, delta: f64) -> f64 {
        let b = if self.responsive {
            self.cfg.tp * delta
        } else {
            self.cfg.tp * self.cfg.tp * delta
        };
        if self.cfg.integer_windows {
            // The tolerance keeps an exact product (0.9·10 = 9) from truncating one below.
            (b + 1e-9).floor()
        } else {
            b
        }
    }

    /// A window as the kernel holds it: whole packets with
    /// [`TtfwcConfig::integer_windows`] (truncated, as C's unsigned arithmetic does).
    fn whole(&self, w: f64) -> f64 {
        if self.cfg.integer_windows {
            w.floor()
        } else {
            w
        }
    }

    /// The equation window at an ALI (`ttfwc_calc_x(ttfwc_invert_imean(ali))`).
    fn window_at(&self, ali: f64) -> f64 {
        self.whole(self.eq.window(1.0 / ali))
    }

    /// The per-ACK hook (`ttfwc_cong_avoid`, 000 Fig. 4.4, fixed per spec 000 §2.5 #1–#2),
    /// for an ACK that newly acknowledged `acked` packets outside recovery. The window may grow
    /// by the boost once per epoch, and otherwise by at most one packet per ACK.
    pub fn cong_avoid(&mut self, acked: u64, cwnd: f64, ssthresh: f64) -> Increase {
        let acked = self.steps(acked);
        if self.events == 0 || self.is_reno || cwnd < ssthresh {
            // Before the first loss, in Reno mode, and in slow start after a timeout: Reno, the
            // open interval still counting (Fig. 4.4 line 10).
            self.lh.on_packets(acked);
            return Increase::Reno;
        }
        let mid = self.li_dif / 2;
        let mut h = self.lh.open_interval();
        // The kernel's `snd_cwnd` is whole packets.
        let mut cwnd = self.whole(cwnd).max(1.0);
        let mut grow = false;
        for _ in 0..acked {
            if h >= mid {
                // The shadow Reno window: it crosses TFWC's flat window at the midpoint of the
                // flat period (spec 000 §2.2, equal areas) and then grows as Linux' Reno does
                // (Fig. 4.4 lines 20–25, `tcp_cong_avoid_ai`): the counter is compared before it
                // is incremented, so the shadow gains one every `reno_cwnd + 1` packets. The
                // counter starts at 0 (Linux clears `snd_cwnd_cnt` on entering recovery or
                // loss, and nothing else moves it in the TTFWC phase).
                if !self.shadow_started {
                    self.shadow_started = true;
                    self.reno_shadow = self.w_tfwc;
                    self.shadow_cnt = 0;
                }
                if self.shadow_cnt as f64 >= self.reno_shadow {
                    self.reno_shadow += 1.0;
                    self.shadow_cnt = 0;
                } else {
                    self.shadow_cnt += 1;
                }
            }
            h += 1;
            if h <= self.li_dif {
                continue; // flat period
            }
            let c = h - self.li_dif;
            if !self.boosted {
                // The first packet of the increasing period (spec 000 §2.5 #1).
                self.boosted = true;
                if self.alpha > 0.0 {
                    cwnd += self.alpha;
                    self.boosts += 1;
                }
            }
            if self.cfg.ali == AliUpdate::Approximate && c % self.cadence == 0 {
                self.ali += 1.0;
                grow = true;
            }
        }
        self.lh.on_packets(acked);
        if self.cfg.ali == AliUpdate::Exact && h > self.li_dif {
            if let Some(a) = self.lh.average_loss_interval() {
                self.ali = a;
            }
            grow = true;
        }
        if grow && self.ali > 0.0 {
            let w = self.window_at(self.ali);
            if w + self.alpha > cwnd {
                cwnd += 1.0;
            }
        }
        Increase::Set(cwnd)
    }

    /// Packets acknowledged by ACKs that do not reach [`Self::cong_avoid`] (during or at the
    /// end of a loss recovery): they lengthen the open interval, nothing else.
    /// With [`CountUnit::AckEvents`] such an ACK counts one, as it would in `cong_avoid`.
    pub fn on_recovery_acked(&mut self, acked: u64) {
        if !self.cfg.count_recovery || acked == 0 {
            return;
        }
        let n = self.steps(acked);
        self.lh.on_packets(n);
    }

    /// The steps of the open interval an ACK that newly acknowledged `acked` packets makes
    /// ([`CountUnit`]): `acked` (at least 1), or 1 per ACK event.
    fn steps(&self, acked: u64) -> u64 {
        match self.cfg.count_unit {
            CountUnit::Packets => acked.max(1),
            CountUnit::AckEvents => 1,
        }
    }

    /// The loss-event hook (`ttfwc_recalc_ssthresh`, 000 Figs 4.5–4.6, fixed per spec 000 §2.5
    /// #3–#7) for a window `w` at the loss. Returns the new ssthresh (at least 2): the sender
    /// sets cwnd to it after a fast retransmit, to 1 after a timeout.
    pub fn ssthresh(&mut self, w: f64) -> f64 {
        let floor = 2.0_f64;
        // The window this epoch ended at, without its boost if one was added (Fig. 4.6 l. 10).
        let at_loss = if self.boosted { w - self.alpha } else { w };
        self.shadow_started = false;
        self.boosted = false;
        if w.is_nan() || w < self.cfg.reno_below {
            // Too small to say anything about the loss rate: no history update (Fig. 4.5 l. 7).
            self.w_tfwc = w.max(0.0);
            self.enter_reno();
            return floor;
        }
        self.events += 1;
        self.lh.on_loss_event();
        if self.events == 1 {
            // First loss: Reno's halving, and the pseudo-interval whose equation window is the
            // halved one seeds the history (000 Sec. 4.2; spec 000 §2.5 #3; Fig. 4.5 line 12,
            // `snd_cwnd >> 1`).
            self.w_tfwc = self.whole(self.whole(w) / 2.0);
            let p = self.eq.loss_for_window(self.w_tfwc.max(f64::MIN_POSITIVE));
            let interval = if p > 0.0 { 1.0 / p } else { 1.0 };
            self.lh.seed(interval);
            self.ali = self.lh.average_loss_interval().unwrap_or(interval);
            self.alpha = 0.0;
        } else {
            self.is_reno = false;
            self.ali = self.lh.average_loss_interval().unwrap_or(1.0).max(1.0);
            let next = self.window_at(self.ali);
            if self.cfg.tp > 0.0 {
                self.gate.events += 1;
            }
            if self.cfg.tp > 0.0 && self.w_tfwc > 0.0 && self.w_tfwc <= self.reno_shadow {
                // The loss came after the shadow passed TFWC: Reno would halve now, and
                // Eq. 3.1 decides this epoch's boost (000 Fig. 4.6).
                self.reno_shadow = self.whole(self.reno_shadow / 2.0);
                let base = match self.cfg.eps_base {
                    EpsBase::EquationWindow => self.w_tfwc,
                    EpsBase::WindowAtLoss => at_loss,
                    EpsBase::EquationWindowLessBoost => self.w_tfwc - self.alpha,
                };
                self.alpha = 0.0;
                if self.reno_shadow > next {
                    self.gate.shadow_above += 1;
                } else {
                    // `dthresh`, the share of the base the new window keeps, in per cent:
                    // Eq. 3.1 as coded is `dthresh < 100` (a decrease) and `dthresh > 72`
                    // (responsive) or `> 81` (smooth), i.e. 0 < ε < eps_max.
                    let kept = if base > 0.0 { 100.0 * next / base } else { 0.0 };
                    let kept = if self.cfg.integer_windows {
                        kept.floor()
                    } else {
                        kept
                    };
                    // Rounded so that 0.28 gives the code's 72 exactly, not 71.999….
                    let least = (1e9 * 100.0 * (1.0 - self.eps_max)).round() / 1e9;
                    if base <= 0.0 || kept >= 100.0 {
                        self.gate.no_decrease += 1;
                    } else if kept > least {
                        self.gate.passed += 1;
                        self.alpha = self.boost(next - self.reno_shadow);
                    } else {
                        self.gate.too_large += 1;
                    }
                }
            } else if self.cfg.tp > 0.0 {
                self.gate.skipped += 1;
            }
            // Otherwise `alpha` carries over (000 Fig. 4.5 line 30; spec 000 §2.6).
            self.w_tfwc = next;
        }
        self.li_dif = self.increasing_from();
        if self.w_tfwc <= self.cfg.reno_below {
            self.w_tfwc = self.cfg.reno_below;
            self.enter_reno();
        }
        self.w_tfwc.max(floor)
    }

    /// Reno mode (Fig. 4.5 lines 36–39): `is_reno`, `li_dif = 0`. `alpha_cwnd` is left as it
    /// is, as printed: the Reno path never applies it, and the loss that leaves Reno mode
    /// re-evaluates it when the shadow has passed the equation window.
    fn enter_reno(&mut self) {
        self.is_reno = true;
        self.li_dif = 0;
    }

    /// `li_dif` (spec 000 §2.5 #5): the largest open interval at which `ALI_incl` does not yet
    /// exceed `ALI_excl`, read off the shared history. With the same weights `w_0..w_{k−1}` over
    /// both averages (`PartialHistory::SameWeights`), `ALI_incl > ALI_excl` ⇔
    /// `w_0·I0 > Σ_{i<k} w_i·I_{i+1} − Σ_{i<k−1} w_{i+1}·I_{i+1}`.
    fn increasing_from(&self) -> u64 {
        let w = self.lh.weights();
        let (mut excl, mut shifted) = (0.0, 0.0);
        let mut prev: Option<f64> = None;
        for (i, c) in self.lh.closed_intervals().enumerate() {
            excl += w[i] * c;
            if let Some(p) = prev {
                shifted += w[i] * p;
            }
            prev = Some(c);
        }
        // A relative tolerance so that an exact tie (integer intervals) is not lost to rounding:
        // at I0 = x the averages are equal and the window is still flat.
        let x = (excl - shifted) / w[0];
        let x = x + 1e-9 * x.abs().max(1.0);
        if x.is_finite() && x > 0.0 {
            x.min(u64::MAX as f64 / 2.0).floor() as u64
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real-valued reading (`integer_windows = false`), whose worked numbers the first
    /// tests below follow.
    fn real(tp: f64) -> TtfwcConfig {
        TtfwcConfig {
            integer_windows: false,
            ..TtfwcConfig::with_tp(tp)
        }
    }

    /// Feeds `n` single-packet ACKs at a steady window (cwnd = ssthresh = `cwnd`), returning
    /// the window after each.
    fn acks(t: &mut Ttfwc, n: usize, cwnd: f64) -> Vec<f64> {
        let mut c = cwnd;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            match t.cong_avoid(1, c, cwnd.floor()) {
                Increase::Set(x) => c = x,
                Increase::Reno => panic!("Reno increase in the TTFWC phase"),
            }
            out.push(c);
        }
        out
    }

    /// First loss at a window of 20: Reno's halving to W = 10, and the pseudo-interval with
    /// W(p) = 10, 82.15 packets (spec 000 §2.1: "W = 10 → 82.2"), seeds the history; the
    /// increasing period starts once the open interval passes it.
    #[test]
    fn first_loss_halves_and_seeds_the_pseudo_interval() {
        let mut t = Ttfwc::new(real(0.4));
        assert!(!t.responsive());
        assert_eq!(t.history().weights().len(), 16);
        assert_eq!(t.cong_avoid(1, 20.0, 10_000.0), Increase::Reno);
        let th = t.ssthresh(20.0);
        assert_eq!(th, 10.0);
        assert!((t.ali() - 82.15).abs() < 0.01, "{}", t.ali());
        assert_eq!(t.li_dif(), 82);
        assert_eq!(t.history().open_interval(), 1);
        assert_eq!(t.loss_events(), 1);
    }

    /// After the first loss (I0 = 1, the lost packet) the window is flat for 81 packets
    /// (I0 → 82 ≤ 82.15), then the approximate ALI grows by one every 6 packets (smooth mode):
    /// at the 6th packet of the increasing period ALI = 83.15, W = 10.07 > 10, so cwnd becomes
    /// 11; W stays below 11 for the next steps (W(1/84.15) = 10.1).
    #[test]
    fn flat_period_then_cadenced_increase() {
        let mut t = Ttfwc::new(real(0.4));
        t.ssthresh(20.0);
        let w = acks(&mut t, 81 + 5, 10.0);
        assert!(w.iter().all(|&c| c == 10.0), "{w:?}");
        let w = acks(&mut t, 1, 10.0);
        assert_eq!(w, [11.0]);
        assert!((t.ali() - 83.15).abs() < 0.01);
        let w = acks(&mut t, 12, 11.0);
        assert!(w.iter().all(|&c| c == 11.0), "{w:?}");
    }

    /// The exact ALI moves every packet of the increasing period: the window reaches 11 at its
    /// first packet, where max(ALI_incl, ALI_excl) is the open interval alone (one seeded
    /// interval, same weights), 83 > 82.15.
    #[test]
    fn exact_ali_grows_without_a_cadence() {
        let mut t = Ttfwc::new(TtfwcConfig {
            ali: AliUpdate::Exact,
            ..real(0.4)
        });
        t.ssthresh(20.0);
        let w = acks(&mut t, 81, 10.0);
        assert!(w.iter().all(|&c| c == 10.0));
        assert_eq!(acks(&mut t, 1, 10.0), [11.0]);
        assert_eq!(t.ali(), 83.0);
    }

    /// Feeds `n` ACKs of `per` packets each at a steady window, returning the window after each.
    fn acks_of(t: &mut Ttfwc, n: usize, per: u64, cwnd: f64) -> Vec<f64> {
        let mut c = cwnd;
        (0..n)
            .map(|_| {
                match t.cong_avoid(per, c, cwnd.floor()) {
                    Increase::Set(x) => c = x,
                    Increase::Reno => panic!("Reno increase in the TTFWC phase"),
                }
                c
            })
            .collect()
    }

    fn ack_events(tp: f64) -> TtfwcConfig {
        TtfwcConfig {
            count_unit: CountUnit::AckEvents,
            ..real(tp)
        }
    }

    /// `count_unit = "ack-events"` (the kernel's `li_length[0]++` per `cong_avoid` call, spec
    /// 000 §2.6) with one ACK per two packets (delayed ACKs): the first loss at 20 seeds the
    /// same pseudo-interval, 82.15, unconverted (`pseudo_li_calc`, Fig. 4.5 line 13), and
    /// `li_dif` = 82; the flat period is then 81 ACKs, 162 packets, twice the 81 packets of
    /// the packet count (which crosses 82 inside its 41st ACK); the cadence of 6 is 6 ACKs, so
    /// the window reaches 11 at the 87th ACK (ALI 83.15), where the packet count gets there
    /// at the 44th (the 6th packet of the increasing period, I0 = 88, falls in ACK 44).
    #[test]
    fn ack_events_make_the_flat_period_twice_as_long_with_delayed_acks() {
        let mut t = Ttfwc::new(ack_events(0.4));
        t.ssthresh(20.0);
        assert!((t.ali() - 82.15).abs() < 0.01, "{}", t.ali());
        assert_eq!(t.li_dif(), 82);
        let w = acks_of(&mut t, 81 + 5, 2, 10.0);
        assert!(w.iter().all(|&c| c == 10.0), "{w:?}");
        assert_eq!(t.history().open_interval(), 1 + 86);
        assert_eq!(acks_of(&mut t, 1, 2, 10.0), [11.0]);
        assert!((t.ali() - 83.15).abs() < 0.01);
        // The cadence: five more ACKs at 11 (W(1/84.15) = 10.1 < 11), as per packet above.
        let w = acks_of(&mut t, 12, 2, 11.0);
        assert!(w.iter().all(|&c| c == 11.0), "{w:?}");

        let mut p = Ttfwc::new(real(0.4));
        p.ssthresh(20.0);
        let w = acks_of(&mut p, 43, 2, 10.0);
        assert!(w.iter().all(|&c| c == 10.0), "{w:?}");
        assert_eq!(acks_of(&mut p, 1, 2, 10.0), [11.0]);
        assert!((p.ali() - 83.15).abs() < 0.01);
    }

    /// With ACK events the loss interval closed into the history is in ACKs, as the kernel's
    /// `li_length[]`: 69 two-packet ACKs after the first loss close an interval of 70 (139 in
    /// packets), the shadow is set at the midpoint (41 ACKs) and gains one every `reno_cwnd + 1`
    /// ACKs (12 at the loss), and the equation takes the ALI in ACKs as it is (Fig. 4.5 line
    /// 23): ALI 76.08, W = 9.547, the numbers of `second_loss` with one packet per ACK. The
    /// packet count sees 139 and ALI 110.6.
    #[test]
    fn ack_events_close_intervals_in_acks_and_feed_them_to_the_equation() {
        let mut t = Ttfwc::new(ack_events(0.9));
        t.ssthresh(20.0);
        acks_of(&mut t, 40, 2, 10.0);
        assert_eq!(t.reno_shadow(), 0.0);
        acks_of(&mut t, 29, 2, 10.0);
        assert_eq!(t.reno_shadow(), 12.0);
        let th = t.ssthresh(10.0);
        assert!((th - 9.5467).abs() < 1e-3, "{th}");
        assert_eq!(t.history().closed_intervals().next(), Some(70.0));
        assert!((t.alpha() - 3.1920).abs() < 1e-3, "{}", t.alpha());
        let r = second_loss(real(0.9));
        assert_eq!(r.equation_window(), t.equation_window());
        assert_eq!(r.alpha(), t.alpha());

        let mut p = Ttfwc::new(real(0.9));
        p.ssthresh(20.0);
        acks_of(&mut p, 69, 2, 10.0);
        p.ssthresh(10.0);
        assert_eq!(p.history().closed_intervals().next(), Some(139.0));
        assert!((p.ali() - 110.6).abs() < 0.1, "{}", p.ali());
    }

    /// A recovery ACK counts one ACK event whatever it covers (with `count_recovery`), its
    /// packets with the packet count; none with `count_recovery = false`.
    #[test]
    fn recovery_acks_count_one_event_each() {
        for (unit, expect) in [(CountUnit::AckEvents, 2), (CountUnit::Packets, 1 + 7)] {
            let mut t = Ttfwc::new(TtfwcConfig {
                count_unit: unit,
                ..real(0.4)
            });
            t.ssthresh(20.0);
            t.on_recovery_acked(7);
            assert_eq!(t.history().open_interval(), expect, "{unit:?}");
        }
        let mut t = Ttfwc::new(TtfwcConfig {
            count_recovery: false,
            ..ack_events(0.4)
        });
        t.ssthresh(20.0);
        t.on_recovery_acked(7);
        assert_eq!(t.history().open_interval(), 1);
    }

    /// A second loss after 69 more packets (interval 70) with the shadow set at the midpoint
    /// (I0 = 41, shadow = 10) and grown to 12: ALI = (70 + 82.15)/2 = 76.08, W = 9.547,
    /// ε = 0.045. The shadow halves to 6 ≤ 9.547, so alpha = tp²·(9.547 − 6) = 0.5675 at
    /// tp = 0.4 and tp·δ = 3.192 at tp = 0.9, added once at the first packet after the new
    /// flat period.
    fn second_loss(cfg: TtfwcConfig) -> Ttfwc {
        let mut t = Ttfwc::new(cfg);
        t.ssthresh(20.0);
        acks(&mut t, 40, 10.0);
        assert_eq!(t.reno_shadow(), 0.0);
        acks(&mut t, 29, 10.0);
        assert_eq!(t.reno_shadow(), 12.0);
        let th = t.ssthresh(10.0);
        assert!((th - 9.5467).abs() < 1e-3, "{th}");
        t
    }

    #[test]
    fn boost_is_tp_squared_delta_in_smooth_mode_and_tp_delta_in_responsive_mode() {
        let t = second_loss(real(0.4));
        assert!((t.alpha() - 0.5675).abs() < 1e-3, "{}", t.alpha());
        assert_eq!(t.reno_shadow(), 6.0);
        let mut t = second_loss(real(0.9));
        assert!(t.responsive());
        assert!((t.alpha() - 3.1920).abs() < 1e-3, "{}", t.alpha());
        // li_dif with w_0 = w_1: the open interval must pass the older interval, 82.15.
        assert_eq!(t.li_dif(), 82);
        let w = acks(&mut t, 81, 9.0);
        assert!(w.iter().all(|&c| c == 9.0));
        let w = acks(&mut t, 1, 9.0);
        assert!((w[0] - 12.192).abs() < 1e-3, "{w:?}");
        assert_eq!(t.boosts(), 1);
        // Once only: growth then aims at W + alpha (12.74 → 13.24 as the ALI climbs from 76.08
        // to 83), at most +1 per ACK.
        let w = acks(&mut t, 30, w[0]);
        assert_eq!(w[1] - w[0], 1.0, "{w:?}"); // c = 3: W(1/77.08) + 3.19 = 12.8 > 12.19
        assert!(w.windows(2).all(|p| p[1] - p[0] <= 1.0));
        assert!(*w.last().unwrap() <= 14.2, "{w:?}");
        assert_eq!(t.boosts(), 1);
    }

    /// 000 Fig. 4.5 line 30 / Fig. 4.6: `alpha_cwnd` changes only when the gate is evaluated.
    /// After the boost of `second_loss` (3.192 at tp 0.9, shadow halved to 6) a short interval
    /// of 21 packets ends before the midpoint (41): W = 9.547 is above the shadow, the gate is
    /// skipped, and the boost is applied again at the start of the next increasing period. A
    /// later loss after a long interval evaluates the gate with no decrease (ε ≤ 0) and resets
    /// it.
    #[test]
    fn the_boost_carries_over_until_the_gate_is_evaluated_again() {
        let mut t = second_loss(real(0.9));
        let a = t.alpha();
        assert!((a - 3.1920).abs() < 1e-3, "{a}");
        acks(&mut t, 20, 9.0);
        assert_eq!(t.reno_shadow(), 6.0);
        let th = t.ssthresh(9.0);
        assert!(th < 9.5467, "a short interval lowers W: {th}");
        assert_eq!(t.alpha(), a);
        assert_eq!(t.reno_shadow(), 6.0);
        let d = t.li_dif() as usize;
        let w = acks(&mut t, d - 1, th);
        assert!(w.iter().all(|&c| c == th), "flat period {w:?}");
        let w = acks(&mut t, 1, th);
        assert!((w[0] - (th + a)).abs() < 1e-9, "{w:?}");
        assert_eq!(t.boosts(), 1);
        // A long interval: the shadow restarts at the midpoint, W rises at the loss, ε ≤ 0.
        acks(&mut t, 400, w[0]);
        assert!(t.reno_shadow() > th);
        let before = t.equation_window();
        t.ssthresh(w[0]);
        assert!(t.equation_window() > before);
        assert_eq!(t.alpha(), 0.0);
    }

    /// The kernel's `u32` windows (the default, 000 Figs. 4.4–4.6): the first loss at 21
    /// halves to 21 >> 1 = 10; in the increasing period the window moves only when the
    /// truncated equation window passes it (W(1/ALI) ≥ 11 needs the ALI at about 97, 15 steps
    /// of the cadence of 6, where the real-valued reading steps at the first); the second loss
    /// of `second_loss` gives next = ⌊9.547⌋ = 9, dthresh = ⌊900/10⌋ = 90 and, with the
    /// shadow 12 >> 1 = 6, a boost of ⌊0.9·3⌋ = 2 at tp 0.9 and ⌊0.16·3⌋ = 0 at tp 0.4.
    #[test]
    fn integer_windows_follow_the_kernels_u32_arithmetic() {
        let mut t = Ttfwc::new(TtfwcConfig::with_tp(0.4));
        assert_eq!(t.ssthresh(21.0), 10.0);
        assert!((t.ali() - 82.15).abs() < 0.01, "{}", t.ali());
        let eq = Equation::pftk();
        let steps = (1..)
            .find(|k| eq.window(1.0 / (t.ali() + *k as f64)) >= 11.0)
            .unwrap();
        assert_eq!(steps, 15);
        let d = t.li_dif() as usize;
        let w = acks(&mut t, d - 1 + 6 * steps - 1, 10.0);
        assert!(w.iter().all(|&c| c == 10.0), "{w:?}");
        assert_eq!(acks(&mut t, 1, 10.0), [11.0]);
        for (tp, alpha) in [(0.9, 2.0), (0.4, 0.0)] {
            let mut t = Ttfwc::new(TtfwcConfig::with_tp(tp));
            t.ssthresh(20.0);
            acks(&mut t, 69, 10.0);
            assert_eq!(t.reno_shadow(), 12.0);
            assert_eq!(t.ssthresh(10.0), 9.0);
            assert_eq!(t.reno_shadow(), 6.0);
            assert_eq!(t.alpha(), alpha, "tp {tp}");
            assert_eq!(t.gate_counts().passed, 1);
        }
    }

    /// `EpsBase::EquationWindowLessBoost`, Fig. 4.6 line 10 as printed: after the boost of 3.192
    /// (`second_loss`, tp 0.9) a loss after 60 packets gives next = 9.198 (ALI 71.1), 4 % below
    /// the equation window 9.547 but 45 % above 9.547 − 3.192: no decrease, no boost, where the
    /// equation window alone boosts again.
    #[test]
    fn eps_less_the_boost_in_force_is_the_printed_code() {
        let run = |eps_base| {
            let mut t = second_loss(TtfwcConfig {
                eps_base,
                ..real(0.9)
            });
            acks(&mut t, 60, 9.0);
            t.ssthresh(9.0);
            (t.alpha(), t.gate_counts())
        };
        let (a, g) = run(EpsBase::EquationWindow);
        assert!(a > 0.0, "{a} {g:?}");
        assert_eq!(g.passed, 2);
        let (a, g) = run(EpsBase::EquationWindowLessBoost);
        assert_eq!(a, 0.0);
        assert_eq!((g.passed, g.no_decrease), (1, 1), "{g:?}");
    }

    /// `EpsBase::WindowAtLoss`: ε from the window the epoch ended at. A loss after 60 packets
    /// (ALI 71.1, W = 9.198, shadow halved to 5.5) at an actual cwnd of 13: ε = 0.080 from the
    /// equation window 10 boosts by 0.9·(9.198 − 5.5) = 3.328; ε = 0.292 from 13 fails Eq. 3.1
    /// (0.28) and gives none.
    #[test]
    fn eps_from_the_window_at_the_loss_is_a_config_choice() {
        let run = |eps_base| {
            let mut t = Ttfwc::new(TtfwcConfig {
                eps_base,
                ..real(0.9)
            });
            t.ssthresh(20.0);
            acks(&mut t, 60, 10.0);
            let th = t.ssthresh(13.0);
            (th, t.reno_shadow(), t.alpha())
        };
        let (th, shadow, a) = run(EpsBase::EquationWindow);
        let (th2, shadow2, a2) = run(EpsBase::WindowAtLoss);
        assert_eq!((th, shadow), (th2, shadow2));
        let eps_eq = 1.0 - th / 10.0;
        let eps_loss = 1.0 - th / 13.0;
        assert!(eps_loss > eps_eq);
        let expect = |eps: f64| {
            if eps > 0.0 && eps < 0.28 {
                0.9 * (th - shadow)
            } else {
                0.0
            }
        };
        assert!((a - expect(eps_eq)).abs() < 1e-9, "{a} {eps_eq}");
        assert!((a2 - expect(eps_loss)).abs() < 1e-9, "{a2} {eps_loss}");
        assert!((a - 3.328).abs() < 1e-3, "{a}");
        assert_eq!(a2, 0.0);
    }

    #[test]
    fn no_boost_when_eq_3_1_fails_or_tp_is_zero_or_the_shadow_never_passed() {
        // ε = 0.045 is not below a threshold of 0.03: plain TFWC.
        let t = second_loss(TtfwcConfig {
            eps_max_smooth: 0.03,
            ..real(0.4)
        });
        assert_eq!(t.alpha(), 0.0);
        let mut t = second_loss(real(0.0));
        assert_eq!(t.alpha(), 0.0);
        acks(&mut t, 100, 9.0);
        assert_eq!(t.boosts(), 0);
        // A loss before the midpoint of the first flat period: the shadow was never set.
        let mut t = Ttfwc::new(real(0.9));
        t.ssthresh(20.0);
        acks(&mut t, 20, 10.0);
        t.ssthresh(10.0);
        assert_eq!(t.alpha(), 0.0);
        // A long interval raises W: no decrease, no boost.
        let mut t = Ttfwc::new(real(0.9));
        t.ssthresh(20.0);
        acks(&mut t, 200, 10.0);
        t.ssthresh(12.0);
        assert!(t.equation_window() > 10.0);
        assert_eq!(t.alpha(), 0.0);
    }

    /// Below a window of 2 the sender is Reno (000 Sec. 3.4): a loss at cwnd 1.5 leaves the
    /// history alone; an equation window of 1.5 (first loss at 3) enters Reno mode with
    /// ssthresh 2, and a later loss whose equation window exceeds 2 leaves it.
    #[test]
    fn reno_below_a_window_of_two() {
        let mut t = Ttfwc::new(TtfwcConfig::default());
        assert_eq!(t.ssthresh(1.5), 2.0);
        assert!(t.is_reno());
        assert_eq!(t.loss_events(), 0);
        assert_eq!(t.cong_avoid(1, 2.0, 2.0), Increase::Reno);
        let mut t = Ttfwc::new(TtfwcConfig::default());
        assert_eq!(t.ssthresh(3.0), 2.0);
        assert!(t.is_reno());
        assert_eq!(t.li_dif(), 0);
        assert_eq!(t.cong_avoid(1, 3.0, 2.0), Increase::Reno);
        // 400 packets in Reno mode, then a loss: the long interval gives W > 2.
        t.cong_avoid(399, 10.0, 2.0);
        assert!(t.ssthresh(10.0) > 2.0);
        assert!(!t.is_reno());
    }

    /// After a timeout (cwnd 1 below ssthresh) the sender slow-starts as Reno does.
    #[test]
    fn slow_start_after_a_timeout_is_renos() {
        let mut t = Ttfwc::new(TtfwcConfig::default());
        t.ssthresh(20.0);
        assert_eq!(t.cong_avoid(1, 1.0, 10.0), Increase::Reno);
        assert_eq!(t.history().open_interval(), 2);
    }

    /// li_dif is where ALI_incl first exceeds ALI_excl in the shared history, after every loss
    /// of an irregular sequence, in both modes.
    #[test]
    fn li_dif_is_where_the_open_interval_takes_over() {
        for tp in [0.0, 0.4, 0.9] {
            let mut t = Ttfwc::new(TtfwcConfig::with_tp(tp));
            t.ssthresh(30.0);
            let mut x: u64 = 12345;
            for _ in 0..40 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let gap = 5 + (x >> 33) % 300;
                t.cong_avoid(gap, 1e9, 2.0);
                t.ssthresh(20.0);
                if t.is_reno() {
                    continue;
                }
                let d = t.li_dif();
                let mut h = t.history().clone();
                let closed = h.closed_average().unwrap();
                h.on_packets(d - h.open_interval());
                assert!(h.open_average().unwrap() <= closed + 1e-9, "tp {tp} d {d}");
                h.on_packets(1);
                assert!(
                    h.open_average().unwrap() > closed,
                    "tp {tp} d {d} {:?} {:?} {closed}",
                    h.open_average(),
                    h.closed_intervals().collect::<Vec<_>>()
                );
            }
        }
    }

    /// A TTFWC SACK sender and sink in a loop with a 40-segment pipe and one segment in
    /// `every` dropped, periodically or (`random`) at pseudo-random places; returns the sender
    /// after `steps` deliveries.
    fn closed_loop(tp: f64, every: u64, random: bool, steps: u64) -> crate::tcp::TcpSender {
        closed_loop_with(TtfwcConfig::with_tp(tp), None, every, random, steps)
    }

    /// [`closed_loop`] with a TTFWC configuration and the sink's delayed-ACK interval.
    fn closed_loop_with(
        tt: TtfwcConfig,
        delayed_ack: Option<Dur>,
        every: u64,
        random: bool,
        steps: u64,
    ) -> crate::tcp::TcpSender {
        use crate::endpoint::Endpoint;
        use crate::packet::Header;
        use crate::tcp::{Congestion, TcpConfig, TcpSender, TcpSink};
        let cfg = TcpConfig {
            congestion: Congestion::Ttfwc(tt),
            max_window: 40,
            delayed_ack,
            ..TcpConfig::default()
        };
        let (mut s, mut k) = (TcpSender::new(cfg.clone()), TcpSink::new(&cfg));
        let mut flight = std::collections::VecDeque::new();
        let mut now = Time::ZERO;
        let mut n = 0u64;
        while let Some(p) = s.poll_transmit(now) {
            flight.push_back(p);
        }
        for _ in 0..steps {
            now += Dur::from_millis(1);
            let Some(p) = flight.pop_front() else {
                if let Some(t) = s.next_timeout() {
                    now = now.max(t);
                    s.on_timeout(now);
                }
                while let Some(p) = s.poll_transmit(now) {
                    flight.push_back(p);
                }
                continue;
            };
            n += 1;
            let rtx = matches!(p.header, Header::TcpData(d) if d.retransmit);
            let drop = if random {
                (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % every == 0
            } else {
                n % every == 0
            };
            if !drop || rtx {
                k.on_packet(now, &p);
                while let Some(a) = k.poll_transmit(now) {
                    s.on_packet(now, &a);
                }
            }
            while let Some(p) = s.poll_transmit(now) {
                flight.push_back(p);
            }
        }
        s
    }

    /// Through the real sender: every loss event reaches the history, the window follows the
    /// equation (periodic loss 1/100 gives ALI ≈ 100 and W(0.01) = 11.2, spec 000 §2.1), and
    /// the boost never fires there (no decrease, ε = 0); under irregular loss it fires at
    /// tp = 0.9 but never at tp = 0.
    #[test]
    fn the_sender_runs_ttfwc_under_periodic_loss() {
        let s = closed_loop(0.9, 100, false, 60_000);
        let t = s.ttfwc().unwrap();
        assert!(t.loss_events() > 300, "{}", t.loss_events());
        let ali = t.history().closed_average().unwrap();
        assert!((97.0..=103.0).contains(&ali), "ALI {ali}");
        assert!(
            (9.5..=12.5).contains(&t.equation_window()),
            "{}",
            t.equation_window()
        );
        assert_eq!(t.boosts(), 0);
        let s = closed_loop(0.9, 100, true, 60_000);
        let t = s.ttfwc().unwrap();
        assert!(t.boosts() > 0, "{} loss events", t.loss_events());
        eprintln!(
            "boosts at tp 0.9: {} of {} loss events",
            t.boosts(),
            t.loss_events()
        );
        let s0 = closed_loop(0.0, 100, true, 60_000);
        assert_eq!(s0.ttfwc().unwrap().boosts(), 0);
    }

    /// Through the real sender with a delayed-ACK sink (one ACK per two segments) and a
    /// periodic loss of 1 in 100: the packet count closes intervals of about 100 packets as
    /// without delayed ACKs, the kernel's ACK-event count (`count_unit = "ack-events"`) about
    /// half as many, and its equation window is then about W(1/50) = 7.3 instead of
    /// W(1/100) = 11.2 (spec 000 §2.1).
    #[test]
    fn ack_events_halve_the_intervals_with_delayed_acks() {
        let delack = Some(Dur::from_millis(100));
        let run = |count_unit| {
            let tt = TtfwcConfig {
                count_unit,
                ..TtfwcConfig::with_tp(0.0)
            };
            let s = closed_loop_with(tt, delack, 100, false, 60_000);
            let t = s.ttfwc().unwrap();
            assert!(t.loss_events() > 200, "{}", t.loss_events());
            (t.history().closed_average().unwrap(), t.equation_window())
        };
        let (ali_p, w_p) = run(CountUnit::Packets);
        let (ali_a, w_a) = run(CountUnit::AckEvents);
        eprintln!("packets: ALI {ali_p} W {w_p}; ack events: ALI {ali_a} W {w_a}");
        assert!((95.0..=105.0).contains(&ali_p), "{ali_p}");
        assert!((45.0..=60.0).contains(&ali_a), "{ali_a}");
        assert!((9.5..=12.5).contains(&w_p), "{w_p}");
        assert!((6.0..=8.5).contains(&w_a), "{w_a}");
    }

    /// 002's jitter (Sec. 3.2.7): after the first loss (ALI 82.15) about one ACK in ten is
    /// inflated, and every RTT round (11 ACKs of 1 ms here) has at least one; none when switched off
    /// or above a loss event rate of 25 % (an ALI of 3).
    #[test]
    fn jitter_inflates_one_ack_in_ten_and_at_least_once_per_rtt() {
        let rtt = Some(Dur::from_millis(10));
        let run = |cfg: TtfwcConfig, first_w: f64| {
            let mut t = Ttfwc::new(cfg);
            t.ssthresh(first_w);
            (0..2000u64)
                .map(|i| t.jitter(Time::ZERO + Dur::from_millis(i), rtt))
                .collect::<Vec<bool>>()
        };
        let on = run(TtfwcConfig::with_tp(0.0), 20.0);
        let n = on.iter().filter(|&&j| j).count();
        // 10 % of 2000, plus a forced one in the ~35 % of 11-ACK rounds without a draw.
        assert!((200..=330).contains(&n), "{n}");
        // Each 11-ACK round ends with a forced inflation if it had none, so two never pass
        // without one (at most 22 ACKs between inflations).
        assert!(on.windows(23).all(|w| w.iter().any(|&j| j)));
        let off = run(
            TtfwcConfig {
                jitter: false,
                ..TtfwcConfig::with_tp(0.0)
            },
            20.0,
        );
        assert!(off.iter().all(|&j| !j));
        // An ALI of 3 is a loss event rate above 25 %.
        let mut t = Ttfwc::new(TtfwcConfig::with_tp(0.0));
        t.ssthresh(20.0);
        t.ali = 3.0;
        t.jitter_ali = 3.0;
        assert!((0..100u64).all(|i| !t.jitter(Time::ZERO + Dur::from_millis(i), rtt)));
    }

    #[test]
    fn bad_configs_are_rejected_by_name() {
        let bad = |c: TtfwcConfig| c.validate().unwrap_err();
        assert!(bad(TtfwcConfig::with_tp(1.5)).starts_with("tp:"));
        assert!(bad(TtfwcConfig {
            history_smooth: 0,
            ..TtfwcConfig::default()
        })
        .starts_with("history_smooth:"));
        assert!(TtfwcConfig::default().validate().is_ok());
        // Repaired, never a panic.
        let t = Ttfwc::new(TtfwcConfig {
            tp: f64::NAN,
            history_smooth: 0,
            ..TtfwcConfig::default()
        });
        assert_eq!(t.config().tp, 0.0);
    }
}
