//! WARC's receiver-side estimator (003 Ch. 3): a TCP window emulated once per RTT, the rate as
//! the mean of the last `s` emulated windows (Eq. 3.1), History-Reset (Sec. 3.2.2.1, Eqs.
//! 3.2–3.3), the one-RTT reduction (Sec. 3.2.2.2) and the fluid-based timeout (Sec. 3.2.2.3,
//! Fig. 3.2). The control flow is the thesis' pseudo-code (Fig. 3.3: `LossHandler` is
//! [`Warc::on_loss_event`], `UpdateW` is [`Warc::on_round`]); where it and the text disagree
//! the choice is a [`WarcConfig`] field.
//!
//! This type knows nothing of packets or clocks: it takes loss events and round ends, so the
//! thesis' worked behaviour can be tested round by round.

use std::collections::VecDeque;

use super::config::{FtoBackoff, FtoLoss, HrLosses, LossInsertion, ReductionBasis, WarcConfig};

/// The emulated TCP state and the window history.
#[derive(Clone, Debug)]
pub struct Warc {
    cfg: WarcConfig,
    /// Emulated TCP window `w` in packets per RTT.
    w: f64,
    /// Rate `R` of Eq. 3.1 as last computed, packets per RTT (before the one-RTT reduction).
    rate: f64,
    /// Round counter `t` and the round of the last loss `t'`.
    t: u64,
    t_last_loss: u64,
    /// Rounds left in the timeout phase (`I`) and the back-off count (`C`).
    timeout_rounds: f64,
    backoff: u32,
    /// In the timeout phase, the emulated retransmission's fate is not known yet.
    retransmission_pending: bool,
    /// The round of the latest entry into the timeout phase or back-off
    /// ([`WarcConfig::fto_one_backoff_per_round`]).
    last_backoff_round: Option<u64>,
    /// A loss in this round: the next report is reduced (`HasLoss`).
    has_loss: bool,
    /// Data packets judged received in this round (the received rate of
    /// [`ReductionBasis::Received`]).
    round_received: u64,
    /// [`LossInsertion::Once`]: the halved window is this round's value (no increment).
    skip_increment: bool,
    /// This round is silent ([`WarcConfig::grow_in_silent_rounds`]).
    silent: bool,
    /// `Q_w`, `S_w`: the latest `s` windows and their sum.
    windows: VecDeque<f64>,
    window_sum: f64,
    /// `Q_x`, `S_x`: the latest `N` inter-loss times in rounds and their sum.
    intervals: VecDeque<u64>,
    interval_sum: u64,
    history_resets: u64,
    timeouts: u64,
    loss_events: u64,
}

/// Fixed point for sums: rebuild from the queue now and then so float drift cannot build up
/// over hours of rounds.
const RESUM_EVERY: u64 = 4096;

impl Warc {
    /// A new estimator; `cfg` should have passed [`WarcConfig::validate`] (bad values are
    /// clamped, never a panic).
    pub fn new(cfg: WarcConfig) -> Warc {
        let s = cfg.s.max(1);
        let n = cfg.n.max(1);
        let w = cfg.initial_window.max(1e-3).min(cfg.max_window.max(1e-3));
        Warc {
            w,
            rate: w,
            t: 0,
            t_last_loss: 0,
            timeout_rounds: 0.0,
            backoff: 0,
            retransmission_pending: false,
            last_backoff_round: None,
            has_loss: false,
            round_received: 0,
            skip_increment: false,
            silent: false,
            windows: VecDeque::with_capacity(s + 1),
            window_sum: 0.0,
            intervals: VecDeque::with_capacity(n + 1),
            interval_sum: 0,
            history_resets: 0,
            timeouts: 0,
            loss_events: 0,
            cfg,
        }
    }

    pub fn config(&self) -> &WarcConfig {
        &self.cfg
    }
    /// The emulated TCP window `w`.
    pub fn window(&self) -> f64 {
        self.w
    }
    /// `R(t, s)` of Eq. 3.1 as last computed, packets per RTT.
    pub fn rate(&self) -> f64 {
        self.rate
    }
    /// Rounds emulated so far.
    pub fn rounds(&self) -> u64 {
        self.t
    }
    /// Windows currently averaged.
    pub fn history_len(&self) -> usize {
        self.windows.len()
    }
    /// History-Reset invocations so far.
    pub fn history_resets(&self) -> u64 {
        self.history_resets
    }
    /// Entries into the fluid-based timeout phase.
    pub fn timeouts(&self) -> u64 {
        self.timeouts
    }
    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }
    /// Whether the emulation is in the timeout phase (Fig. 3.2).
    pub fn in_timeout(&self) -> bool {
        self.timeout_rounds > 0.0
    }

    /// A data packet arrived (in sequence order): in the timeout phase the first one is the
    /// emulated retransmission getting through ([`FtoLoss::Retransmission`]).
    pub fn on_packet_received(&mut self) {
        self.retransmission_pending = false;
        self.round_received += 1;
    }

    /// The round ending next is silent: a packet was due and none arrived. Unless
    /// [`WarcConfig::grow_in_silent_rounds`], the emulated window does not grow in it.
    pub fn on_silent_round(&mut self) {
        self.silent = true;
    }

    /// `UpdateSum(Q_w, S_w, w)`.
    fn push_window(&mut self, w: f64) {
        if self.windows.len() >= self.cfg.s.max(1) {
            if let Some(old) = self.windows.pop_front() {
                self.window_sum -= old;
            }
        }
        self.windows.push_back(w);
        self.window_sum += w;
        if self.t % RESUM_EVERY == 0 {
            self.window_sum = self.windows.iter().sum();
        }
    }

    fn mean_window(&self) -> f64 {
        if self.windows.is_empty() {
            self.w
        } else {
            (self.window_sum / self.windows.len() as f64).max(0.0)
        }
    }

    /// A loss event at the current round (`LossHandler`). `u = ⌈RTO/RTT⌉` is the fluid
    /// timeout's length in rounds (Sec. 3.2.2.3), at least 1.
    pub fn on_loss_event(&mut self, u: u32) {
        self.loss_events += 1;
        let u = f64::from(u.max(1));
        if self.timeout_rounds > 0.0 {
            // Every loss event is an inter-loss time for History-Reset ([`HrLosses::Every`]),
            // whether or not it backs the timeout phase off.
            if self.cfg.hr_losses == HrLosses::Every {
                self.record_interval();
            }
            if !self.cfg.fluid_timeout {
                // Without FTO the timeout phase is never entered; unreachable but harmless.
                self.timeout_rounds = 0.0;
                return;
            }
            if self.cfg.fto_loss == FtoLoss::Retransmission && !self.retransmission_pending {
                return;
            }
            if self.cfg.fto_one_backoff_per_round && self.last_backoff_round == Some(self.t) {
                return;
            }
            self.last_backoff_round = Some(self.t);
            self.retransmission_pending = true;
            // A further loss in the timeout phase: back off (Fig. 3.3, `C` capped at 6).
            self.backoff = (self.backoff + 1).min(self.cfg.max_backoff);
            let factor = match self.cfg.fto_backoff {
                // Text: W = 1/(u·2^C), I += u·2^C: the first extra loss doubles, as TCP's RTO.
                FtoBackoff::Text => f64::from(1u32 << self.backoff),
                // Pseudo-code: `2<<C` with `X<<Y` defined as X·2^Y, i.e. 2^(C+1).
                FtoBackoff::PseudoCode => f64::from(2u32 << self.backoff),
            };
            self.w = 1.0 / (u * factor);
            self.timeout_rounds += u * factor;
            return;
        }
        if self.w >= self.cfg.timeout_window || !self.cfg.fluid_timeout {
            self.w = (self.w / 2.0).max(self.cfg.min_window);
            self.has_loss = true;
        } else {
            // Enter the fluid-based timeout: TCP's one packet per RTO spread over u rounds.
            self.timeouts += 1;
            self.last_backoff_round = Some(self.t);
            self.timeout_rounds = u;
            self.backoff = 0;
            self.retransmission_pending = true;
            self.w = 1.0 / u;
        }
        match self.cfg.loss_insertion {
            LossInsertion::Twice => self.push_window(self.w),
            LossInsertion::Once => self.skip_increment = true,
        }
        self.record_interval();
    }

    /// `UpdateSum(Q_x, S_x, t − t')`, `t' = t` and the History-Reset check of `LossHandler`.
    fn record_interval(&mut self) {
        let x = self.t.saturating_sub(self.t_last_loss);
        if self.intervals.len() >= self.cfg.n.max(1) {
            if let Some(old) = self.intervals.pop_front() {
                self.interval_sum -= old;
            }
        }
        self.intervals.push_back(x);
        self.interval_sum += x;
        self.t_last_loss = self.t;
        if self.history_reset_due() {
            self.history_reset();
        }
    }

    /// Eq. 3.2 with Eq. 3.3: `R̄_TCP(N)·K ≤ R(t, s)`, checked at each loss against the rate last
    /// computed. With [`WarcConfig::hr_requires_full`] it waits for `N` samples, the premise of
    /// the false-positive analysis (Sec. 3.4.4).
    fn history_reset_due(&self) -> bool {
        if !self.cfg.history_reset || self.intervals.is_empty() {
            return false;
        }
        if self.cfg.hr_requires_full && self.intervals.len() < self.cfg.n.max(1) {
            return false;
        }
        let tcp_mean = 1.5 * self.interval_sum as f64 / self.intervals.len() as f64;
        tcp_mean * self.cfg.k <= self.rate
    }

    /// `HistoryReset(S_x)`: keep the latest `S_x` windows; the rate follows at once.
    fn history_reset(&mut self) {
        let keep = usize::try_from(self.interval_sum)
            .unwrap_or(usize::MAX)
            .max(1);
        if self.windows.len() > keep {
            let drop = self.windows.len() - keep;
            self.windows.drain(..drop);
            self.window_sum = self.windows.iter().sum();
            self.rate = self.mean_window();
            self.history_resets += 1;
        }
    }

    /// The end of a round (`UpdateW`): grow or count down, average, and return the rate to
    /// report for the next round in packets per RTT (7/8 of it after a loss, Sec. 3.2.2.2).
    pub fn on_round(&mut self) -> f64 {
        if self.timeout_rounds > 0.0 {
            self.timeout_rounds = (self.timeout_rounds - 1.0).max(0.0);
        } else if !self.skip_increment && (!self.silent || self.cfg.grow_in_silent_rounds) {
            // +1 per RTT up to the emulated TCP's maximum window (`max_window`, 003 Sec. 2.4).
            self.w = (self.w + 1.0).min(self.cfg.max_window.max(self.cfg.min_window));
        }
        self.skip_increment = false;
        self.silent = false;
        self.t += 1;
        self.push_window(self.w);
        self.rate = self.mean_window();
        let report = if self.has_loss && self.cfg.one_rtt_reduction {
            let base = match self.cfg.reduction_basis {
                ReductionBasis::Averaged => self.rate,
                ReductionBasis::Received => (self.round_received as f64).max(self.cfg.min_window),
            };
            base * self.cfg.reduction
        } else {
            self.rate
        };
        self.has_loss = false;
        self.round_received = 0;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> WarcConfig {
        WarcConfig::default()
    }

    /// Runs `rounds` rounds with a loss every `period` rounds; returns the mean reported rate
    /// and the emulated windows' mean over the same rounds.
    fn periodic(w: &mut Warc, rounds: u64, period: u64) -> (f64, f64) {
        periodic_u(w, rounds, period, 1)
    }

    fn periodic_u(w: &mut Warc, rounds: u64, period: u64, u: u32) -> (f64, f64) {
        let (mut r, mut win) = (0.0, 0.0);
        for i in 1..=rounds {
            if i % period == 0 {
                w.on_loss_event(u);
            }
            r += w.on_round();
            win += w.window();
        }
        (r / rounds as f64, win / rounds as f64)
    }

    #[test]
    fn the_rate_is_the_mean_of_the_last_s_windows() {
        let mut w = Warc::new(WarcConfig {
            s: 4,
            initial_window: 1.0,
            ..cfg()
        });
        // Windows 2, 3, 4, 5, 6: the mean of the last four is 4.5 (Eq. 3.1).
        let rates: Vec<f64> = (0..5).map(|_| w.on_round()).collect();
        assert_eq!(rates, vec![2.0, 2.5, 3.0, 3.5, 4.5]);
    }

    #[test]
    fn a_loss_halves_the_window_and_the_next_report_is_seven_eighths() {
        let mut w = Warc::new(WarcConfig {
            s: 1,
            initial_window: 19.0,
            ..cfg()
        });
        assert_eq!(w.on_round(), 20.0);
        w.on_loss_event(1);
        assert_eq!(w.window(), 10.0);
        // The halved window is this round's value; the report is 7/8 of the average.
        assert_eq!(w.on_round(), 10.0 * 7.0 / 8.0);
        assert_eq!(w.on_round(), 11.0, "one round only");
        let mut no = Warc::new(WarcConfig {
            s: 1,
            initial_window: 19.0,
            one_rtt_reduction: false,
            ..cfg()
        });
        no.on_round();
        no.on_loss_event(1);
        assert_eq!(no.on_round(), 10.0);
    }

    /// Sec. 3.2.2.2's text: after a loss the next round's rate is 7/8 of what the receiver
    /// received in the round, not of the averaged `R` (Fig. 3.3's `Ack(R × 7/8)`).
    #[test]
    fn the_received_basis_reduces_the_rate_received_in_the_round() {
        let mut w = Warc::new(WarcConfig {
            s: 4,
            initial_window: 20.0,
            reduction_basis: ReductionBasis::Received,
            ..cfg()
        });
        for _ in 0..4 {
            for _ in 0..21 {
                w.on_packet_received();
            }
            w.on_round();
        }
        // 16 packets got through in the round with the loss: the report is 16 · 7/8 = 14,
        // where the averaged basis gives 7/8 of the mean window.
        for _ in 0..16 {
            w.on_packet_received();
        }
        w.on_loss_event(1);
        let mut other = w.clone();
        other.cfg.reduction_basis = ReductionBasis::Averaged;
        let averaged = other.on_round();
        assert_eq!(w.on_round(), 14.0);
        assert!((averaged - 7.0 / 8.0 * w.rate()).abs() < 1e-12);
        assert_ne!(averaged, 14.0);
        // One round only, and the count starts again: no loss, the averaged rate.
        w.on_packet_received();
        assert_eq!(w.on_round(), w.rate());
        // A loss in a round that received nothing: the floor, one packet per RTT (·7/8).
        w.on_loss_event(1);
        assert_eq!(w.on_round(), 7.0 / 8.0);
    }

    #[test]
    fn the_emulated_window_stops_at_max_window_and_halves_from_there() {
        // 003 Sec. 2.4: the set-up's TCP has a 200-packet maximum window; ns-2 halves
        // min(cwnd_, window_) at a loss, so the emulated window halves from the cap.
        let mut w = Warc::new(WarcConfig {
            s: 1,
            max_window: 30.0,
            ..cfg()
        });
        for _ in 0..100 {
            w.on_round();
        }
        assert_eq!((w.window(), w.rate()), (30.0, 30.0));
        w.on_loss_event(1);
        assert_eq!(w.window(), 15.0);
        assert_eq!(
            WarcConfig::default().max_window,
            crate::tcp::TcpConfig::default().max_window as f64
        );
        let mut free = Warc::new(WarcConfig {
            s: 1,
            max_window: f64::INFINITY,
            ..cfg()
        });
        for _ in 0..300 {
            free.on_round();
        }
        assert_eq!(free.window(), 302.0, "inf removes the cap");
        let bad = WarcConfig {
            max_window: 1.5,
            ..cfg()
        };
        assert!(bad.validate().unwrap_err().starts_with("max_window"));
        assert!(WarcConfig {
            max_window: f64::NAN,
            ..cfg()
        }
        .validate()
        .is_err());
    }

    #[test]
    fn under_periodic_loss_the_rate_equals_the_emulated_tcp_mean() {
        // Eqs. 3.4–3.6: the average of R equals the average of W. Loss every 20 rounds:
        // w/2 + 19 = w, so TCP's window saws from 19 to 38 (mean 28.5).
        let mut w = Warc::new(WarcConfig {
            one_rtt_reduction: false,
            ..cfg()
        });
        periodic(&mut w, 2000, 20);
        let (r, win) = periodic(&mut w, 4000, 20);
        assert!((r - win).abs() < 0.01 * win, "R {r} vs W {win}");
        assert!((win - 28.5).abs() < 0.01, "{win}");
        assert_eq!(
            w.history_resets(),
            0,
            "no false History-Reset under periodic loss"
        );
    }

    #[test]
    fn history_reset_jumps_to_the_tcp_mean_of_the_last_n_epochs() {
        // Steady state at a loss every 40 rounds (w saws 39..78, mean 58.5), then a loss every
        // 4 rounds. Q_x slides: after j short epochs its mean is (12·40 − 36j)/12 = 40 − 3j
        // rounds, and Eq. 3.2 (1.5 · mean · K ≤ R, R still ≈ 55) first holds at j = 10.
        let mut w = Warc::new(cfg());
        periodic(&mut w, 1600, 40);
        let before = w.rate();
        assert!(before > 50.0, "{before}");
        let mut losses = 0;
        while w.history_resets() == 0 && losses < 100 {
            for _ in 0..3 {
                w.on_round();
            }
            w.on_loss_event(1);
            losses += 1;
            w.on_round();
        }
        assert_eq!(losses, 10, "HR within N losses");
        // S(N) = 2 × 40 + 10 × 4 = 120 windows kept at the reset, plus the round since.
        assert_eq!(w.history_len(), 121);
        // The kept windows still include two old epochs, so the rate drops to 42.6 (from
        // 58.5), not yet to the short epochs' TCP mean; the next resets finish the job.
        assert!(w.rate() < 0.75 * before, "{} vs {before}", w.rate());
        for _ in 0..12 {
            for _ in 0..3 {
                w.on_round();
            }
            w.on_loss_event(1);
            w.on_round();
        }
        assert!(w.rate() < 12.0, "{}", w.rate());
    }

    /// Steady state at a loss every 100 rounds (w saws 99..198), 50 rounds on, then a loss
    /// event every round (the queue overflowing after a fall of the available bandwidth, E3.5)
    /// with the emulated retransmission getting through and `u = 7` (E3.5's 1-s RTO over a
    /// 0.16-s RTT). Returns the estimator, the rate before the change and the loss events after
    /// it until History-Reset first removes windows.
    fn losses_until_reset(hr_losses: HrLosses, fto_loss: FtoLoss) -> (Warc, f64, u32) {
        let mut w = Warc::new(WarcConfig {
            hr_losses,
            fto_loss,
            ..cfg()
        });
        periodic(&mut w, 2050, 100);
        assert_eq!(w.history_resets(), 0);
        let before = w.rate();
        let mut losses = 0;
        while w.history_resets() == 0 && losses < 200 {
            loss_round(&mut w);
            losses += 1;
        }
        (w, before, losses)
    }

    fn loss_round(w: &mut Warc) {
        w.on_loss_event(7);
        w.on_packet_received();
        w.on_round();
    }

    #[test]
    fn history_reset_counts_every_loss_event_including_the_timeout_phase() {
        // Sec. 3.2.2.1 / Eq. 3.3: X(-j) is the time between the j-th and (j+1)-th last losses.
        // The first loss closes a 50-round interval. After the 11th, Q_x is 100, 50 and ten
        // ones (S(N) = 160 = s: nothing to remove); after the 12th, 50 and eleven ones, so
        // HistoryReset(61) keeps the last epoch's 50 windows and the 11 since; after the 13th
        // S(N) = 12 and only the windows since the change are left. The timeout phase (entered
        // at the 7th loss, after six halvings from w ≈ 149) does not stop the count.
        let (mut w, before, every) = losses_until_reset(HrLosses::Every, FtoLoss::Any);
        assert_eq!(every, 12);
        assert!(w.rate() < 0.75 * before, "{} vs {before}", w.rate());
        loss_round(&mut w);
        assert_eq!(w.history_resets(), 2);
        assert!(w.rate() < 0.1 * before, "{} vs {before}", w.rate());
        // The same with only the emulated retransmission's loss backing the phase off.
        let (_, _, rtx) = losses_until_reset(HrLosses::Every, FtoLoss::Retransmission);
        assert_eq!(rtx, 12);
        // Fig. 3.3 literally: a loss in the timeout phase does not enter Q_x. With every loss
        // in the phase backing it off (`any`), the phase grows by u·2^C per round and never
        // ends while a loss comes every round, so no further interval is recorded; with only
        // the retransmission's loss backing off (the default),
        // after the 7 normal-phase intervals each further one costs a whole u-round phase.
        let (_, _, normal) = losses_until_reset(HrLosses::NormalPhase, FtoLoss::Any);
        assert_eq!(normal, 200, "no reset within 200 losses");
        let (_, _, normal) = losses_until_reset(HrLosses::NormalPhase, FtoLoss::Retransmission);
        assert_eq!(normal, 42);
    }

    #[test]
    fn without_history_reset_the_rate_falls_slowly() {
        let mut w = Warc::new(WarcConfig {
            history_reset: false,
            ..cfg()
        });
        periodic(&mut w, 1600, 40);
        let before = w.rate();
        periodic(&mut w, 48, 4);
        assert_eq!(w.history_resets(), 0);
        assert!(w.rate() > before / 2.0, "{} vs {before}", w.rate());
    }

    #[test]
    fn a_loss_below_three_packets_enters_the_fluid_timeout() {
        let mut w = Warc::new(WarcConfig {
            initial_window: 2.0,
            ..cfg()
        });
        w.on_loss_event(4);
        assert!(w.in_timeout());
        assert_eq!(w.window(), 0.25, "w = 1/u");
        for _ in 0..3 {
            w.on_round();
            assert_eq!(w.window(), 0.25);
        }
        // A further loss in the phase (text rule): w = 1/(u·2), I += 2u.
        w.on_loss_event(4);
        assert_eq!(w.window(), 1.0 / 8.0);
        let mut rounds = 0;
        while w.in_timeout() {
            w.on_round();
            rounds += 1;
        }
        assert_eq!(rounds, 9, "1 left of the first u, plus 2u");
        w.on_round();
        assert_eq!(w.window(), 1.125, "then +1 per round, no slow start");

        let mut p = Warc::new(WarcConfig {
            initial_window: 2.0,
            fto_backoff: FtoBackoff::PseudoCode,
            // Both losses in one round (see `the_timeout_phase_backs_off_at_most_once_a_round`).
            fto_one_backoff_per_round: false,
            ..cfg()
        });
        p.on_loss_event(4);
        p.on_loss_event(4);
        assert_eq!(p.window(), 1.0 / 16.0, "pseudo-code: 2<<C = 2^(C+1)");
    }

    /// A link outage's gap is judged at once when the link returns, one loss event per RTT of
    /// send time (78 in one round after 9 s in `tests/outage.rs`). The emulated TCP sends one
    /// packet per backed-off RTO, so it loses at most one retransmission per round: the
    /// phase backs off at most once a round (entering it counts), not once per event.
    #[test]
    fn the_timeout_phase_backs_off_at_most_once_a_round() {
        for once in [true, false] {
            let mut w = Warc::new(WarcConfig {
                initial_window: 2.0,
                fto_one_backoff_per_round: once,
                ..cfg()
            });
            // The sixth of the 78 events in the outage's round entered the phase, the next 71
            // backed it off.
            for _ in 0..72 {
                w.on_loss_event(2);
            }
            let mut rounds = 0;
            if once {
                assert_eq!(w.window(), 0.5, "entered, no back-off in the entry's round");
                w.on_round();
                for _ in 0..72 {
                    w.on_loss_event(2);
                }
                assert_eq!(w.window(), 0.25, "one back-off in the next round: 1/(u·2)");
                rounds += 1;
            } else {
                assert_eq!(
                    w.window(),
                    1.0 / 128.0,
                    "C = 6 after six of the 71 back-offs"
                );
            }
            while w.in_timeout() {
                w.on_round();
                rounds += 1;
            }
            // u, then 2u; without the limit u + 71 back-offs of u·2^C, C up to 6: 8574 rounds.
            let want = if once {
                6
            } else {
                2 + (4 + 8 + 16 + 32 + 64 + 128) + 65 * 128
            };
            assert_eq!(rounds, want, "once a round: {once}");
        }
    }

    #[test]
    fn in_the_timeout_phase_another_loss_backs_off_even_after_an_arrival() {
        // Sec. 3.2.2.3 read literally (`fto_loss = "any"`): "If another loss occurs during the
        // phase (C > 0), WARC will regard the loss as the second timeout event" (Fig. 3.3
        // alike), whether or not a packet got through since the phase began. The default
        // (`retransmission`, below) backs off only on the emulated retransmission's loss.
        let mut w = Warc::new(WarcConfig {
            initial_window: 2.0,
            fto_loss: FtoLoss::Any,
            // Every loss in one round (see `the_timeout_phase_backs_off_at_most_once_a_round`).
            fto_one_backoff_per_round: false,
            ..cfg()
        });
        assert_eq!(WarcConfig::default().fto_loss, FtoLoss::Retransmission);
        w.on_loss_event(4);
        w.on_packet_received();
        w.on_loss_event(4);
        assert_eq!(w.window(), 0.125, "w = 1/(u·2^1)");
        w.on_packet_received();
        w.on_loss_event(4);
        assert_eq!(w.window(), 1.0 / 16.0, "w = 1/(u·2^2)");
        // I: 4, + 8, + 16 rounds.
        let mut rounds = 0;
        while w.in_timeout() {
            w.on_round();
            rounds += 1;
        }
        assert_eq!(rounds, 28);

        // The default: only the emulated retransmission's loss backs off.
        let mut rtx = Warc::new(WarcConfig {
            initial_window: 2.0,
            fto_loss: FtoLoss::Retransmission,
            ..cfg()
        });
        rtx.on_loss_event(4);
        rtx.on_round();
        rtx.on_loss_event(4);
        assert_eq!(rtx.window(), 0.125, "the retransmission lost: back-off");
        rtx.on_packet_received(); // the retransmission got through
        rtx.on_loss_event(4);
        assert_eq!(rtx.window(), 0.125, "no back-off");
    }

    /// `max_backoff = 0` is no back-off: every further loss of the phase sets `W = 1/u` and
    /// adds `u` rounds (the pseudo-code reading's `2<<0` doubles both once, as the text's
    /// `C = 1`). `timeout_window = 0` would never enter the phase: refused with FTO on.
    #[test]
    fn max_backoff_zero_repeats_the_first_timeout_and_timeout_window_zero_is_refused() {
        let mut w = Warc::new(WarcConfig {
            initial_window: 2.0,
            max_backoff: 0,
            fto_loss: FtoLoss::Any,
            fto_one_backoff_per_round: false,
            ..cfg()
        });
        w.on_loss_event(4);
        for _ in 0..2 {
            w.on_loss_event(4);
            assert_eq!(w.window(), 0.25, "w = 1/u, no back-off");
        }
        let mut rounds = 0;
        while w.in_timeout() {
            w.on_round();
            rounds += 1;
        }
        assert_eq!(rounds, 12, "u + u + u");
        let mut p = Warc::new(WarcConfig {
            initial_window: 2.0,
            max_backoff: 0,
            fto_loss: FtoLoss::Any,
            fto_backoff: FtoBackoff::PseudoCode,
            fto_one_backoff_per_round: false,
            ..cfg()
        });
        p.on_loss_event(4);
        p.on_loss_event(4);
        p.on_loss_event(4);
        assert_eq!(p.window(), 0.125, "2<<0: 1/(2u) every time");

        let zero = WarcConfig {
            timeout_window: 0.0,
            ..cfg()
        };
        let e = zero.validate().unwrap_err();
        assert!(
            e.starts_with("timeout_window: must be above 0 with fluid_timeout on"),
            "{e}"
        );
        assert!(e.contains("set fluid_timeout = false"), "{e}");
        let off = WarcConfig {
            fluid_timeout: false,
            ..zero
        };
        assert_eq!(off.validate(), Ok(()));
        let small = WarcConfig {
            timeout_window: 0.5,
            ..cfg()
        };
        assert_eq!(small.validate(), Ok(()));
    }

    #[test]
    fn without_fto_a_small_window_just_halves() {
        let mut w = Warc::new(WarcConfig {
            initial_window: 2.0,
            fluid_timeout: false,
            ..cfg()
        });
        w.on_loss_event(4);
        assert!(!w.in_timeout());
        assert_eq!(w.window(), 1.0);
    }

    #[test]
    fn heavy_loss_with_fto_averages_lower_than_without() {
        // A loss every 2 rounds with u = 4: the fluid timeout feeds small windows into the mean
        // ("WARC w/o TO" takes more than TCP, Fig. 3.11).
        let run = |fto| {
            let mut w = Warc::new(WarcConfig {
                fluid_timeout: fto,
                ..cfg()
            });
            periodic_u(&mut w, 2000, 2, 4).0
        };
        let (with, without) = (run(true), run(false));
        assert!(with < 0.7 * without, "with {with}, without {without}");
    }

    #[test]
    fn hr_false_positive_rate_under_exponential_losses_is_about_one_in_a_thousand() {
        // Sec. 3.4.4: P[HR] = F_Gamma(N,1)(N/K) = 9.15e-4 for (K, N) = (3, 12). Simulated with
        // exponential inter-loss rounds of mean 200 (W ≈ 300, far below s so the
        // average is steady): ~1e-3 of losses trigger. Deterministic LCG draws.
        let mut w = Warc::new(WarcConfig { s: 4000, ..cfg() });
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let losses = 40_000;
        let mut resets_after_warmup = 0;
        for i in 0..losses {
            let x = (-200.0 * uniform().ln()).round().max(1.0) as u64;
            for _ in 0..x {
                w.on_round();
            }
            let before = w.history_resets();
            w.on_loss_event(1);
            if i > 2000 && w.history_resets() > before {
                resets_after_warmup += 1;
            }
        }
        let rate = resets_after_warmup as f64 / (losses - 2000) as f64;
        assert!(rate < 5e-3, "false HR rate {rate}");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        #[derive(Clone, Debug)]
        enum Op {
            Round,
            Loss(u32),
            Received,
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                6 => Just(Op::Round),
                2 => (0u32..40).prop_map(Op::Loss),
                1 => Just(Op::Received),
            ]
        }

        fn any_cfg() -> impl Strategy<Value = WarcConfig> {
            (
                1usize..300,
                1usize..20,
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
                .prop_map(|(s, n, hr, fto, full, twice)| WarcConfig {
                    s,
                    n,
                    history_reset: hr,
                    fluid_timeout: fto,
                    hr_requires_full: full,
                    loss_insertion: if twice {
                        LossInsertion::Twice
                    } else {
                        LossInsertion::Once
                    },
                    ..WarcConfig::default()
                })
        }

        proptest! {
            #[test]
            fn rate_and_history_stay_in_bounds(cfg in any_cfg(), ops in proptest::collection::vec(op(), 0..600)) {
                let s = cfg.s;
                let mut w = Warc::new(cfg);
                for o in ops {
                    match o {
                        Op::Round => {
                            let r = w.on_round();
                            prop_assert!(r.is_finite() && r > 0.0, "report {}", r);
                        }
                        Op::Loss(u) => w.on_loss_event(u),
                        Op::Received => w.on_packet_received(),
                    }
                    prop_assert!(w.history_len() <= s);
                    prop_assert!(w.window() > 0.0 && w.window().is_finite());
                    prop_assert!(w.rate().is_finite() && w.rate() > 0.0);
                }
            }
        }
    }
}
