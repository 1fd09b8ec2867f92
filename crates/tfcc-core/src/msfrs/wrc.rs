//! WRC, the Window-based Rate Controller (003 §4.3.2, Fig. 4.4): when to release a request.
//!
//! WRC caps `W`, the number of outstanding responses, at `W+`, and every `T` seconds measures the
//! downlink utilisation `U_k = (S_k/T)/C` (Eq. 4.2) from the response bytes `S_k` received in the
//! interval. If the window was the binding limit it sets `W+ ← min(U+/U_k, K)·W+` (Eq. 4.3);
//! otherwise the low utilisation came from too few requests, and raising W+ would not help, so
//! W+ stays where it is (Fig. 4.13).

use crate::msfrs::config::{BindingRule, MsfrsConfig, WindowRounding};
use crate::time::{Dur, Time};
use crate::units::Rate;

/// What one update interval measured and did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowUpdate {
    /// The end of the interval.
    pub at: Time,
    /// `U_k` of Eq. 4.2.
    pub utilization: f64,
    /// Whether the window bound, so W+ was recomputed.
    pub binding: bool,
    /// W+ before and after.
    pub before: f64,
    pub after: f64,
}

/// The controller's state.
#[derive(Clone, Debug)]
pub struct Wrc {
    target: f64,
    max_growth: f64,
    interval: Dur,
    capacity: Rate,
    min_window: f64,
    rounding: WindowRounding,
    binding: BindingRule,
    /// `W+`, real-valued (see [`WindowRounding::Continuous`]).
    window_max: f64,
    /// `W`, outstanding responses.
    outstanding: u32,
    /// `S_k`, response bytes received in the current interval.
    bytes: u64,
    /// End of the current interval.
    next_update: Time,
    /// A request found the window full during the current interval.
    blocked: bool,
    last: Option<WindowUpdate>,
    updates: u64,
}

impl Wrc {
    /// A controller whose first interval starts at `now`; `cfg` is validated by the caller.
    pub fn new(cfg: &MsfrsConfig, now: Time) -> Self {
        Wrc {
            target: cfg.target_utilization,
            max_growth: cfg.max_growth,
            interval: cfg.update_interval,
            capacity: cfg.capacity,
            min_window: cfg.min_window,
            rounding: cfg.window_rounding,
            binding: cfg.binding,
            window_max: cfg.initial_window,
            outstanding: 0,
            bytes: 0,
            next_update: now.saturating_add(cfg.update_interval),
            blocked: false,
            last: None,
            updates: 0,
        }
    }

    /// `W < W+`: one more response may be outstanding.
    pub fn can_release(&self) -> bool {
        (self.outstanding as f64) < self.window_max
    }

    /// The integer limit on `W` that [`Self::can_release`] enforces, `⌈W+⌉`.
    pub fn limit(&self) -> u32 {
        self.window_max.ceil().min(u32::MAX as f64) as u32
    }

    /// `W`.
    pub fn outstanding(&self) -> u32 {
        self.outstanding
    }

    /// `W+`.
    pub fn window_max(&self) -> f64 {
        self.window_max
    }

    /// The last completed interval, if any.
    pub fn last_update(&self) -> Option<WindowUpdate> {
        self.last
    }

    /// Update intervals completed.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// A request was released: `W ← W+1`.
    pub fn on_release(&mut self) {
        self.outstanding += 1;
    }

    /// A response ended: `W ← W−1`.
    pub fn on_complete(&mut self) {
        self.outstanding = self.outstanding.saturating_sub(1);
    }

    /// Downlink bytes that count towards `S_k`: responses, and exceptive traffic (§4.6 types 2
    /// and 3 both enter U).
    pub fn on_bytes(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// A request is waiting and the window is full ([`BindingRule::DuringInterval`]).
    pub fn note_blocked(&mut self) {
        if !self.can_release() {
            self.blocked = true;
        }
    }

    /// When the current interval ends.
    pub fn next_timeout(&self) -> Time {
        self.next_update
    }

    /// Closes every interval that has ended by `now` (Eq. 4.2–4.3) and returns the last one
    /// closed, or `None` if none had ended (an early call is a no-op).
    ///
    /// 003 §4.3.2: "once U_k is changed, WRC updates W+ by the equation" (4.3). Read as "each
    /// time a new U_k is measured", i.e. at the end of every interval T (Eq. 4.2 defines `U_k`
    /// per interval and Eq. 4.3 indexes W+ by the same k), not "only when the value of U_k
    /// differs from U_{k−1}": an equal U_k ≠ U+ would then leave a wrong W+ standing.
    pub fn on_timeout(&mut self, now: Time, waiting: bool) -> Option<WindowUpdate> {
        let mut closed = None;
        while now >= self.next_update {
            let at = self.next_update;
            let secs = self.interval.as_secs_f64();
            let utilization = self.bytes as f64 * 8.0 / (self.capacity.bps() as f64 * secs);
            let binding = match self.binding {
                BindingRule::AtUpdate => !self.can_release(),
                BindingRule::DuringInterval => self.blocked || (waiting && !self.can_release()),
            };
            let before = self.window_max;
            if binding {
                // U_k = 0 (nothing arrived although the window was full) gives the cap K.
                let factor = if utilization > 0.0 {
                    (self.target / utilization).min(self.max_growth)
                } else {
                    self.max_growth
                };
                let mut w = before * factor;
                if self.rounding == WindowRounding::Nearest {
                    w = w.round();
                }
                self.window_max = w.max(self.min_window);
            }
            let update = WindowUpdate {
                at,
                utilization,
                binding,
                before,
                after: self.window_max,
            };
            self.last = Some(update);
            closed = Some(update);
            self.updates += 1;
            self.bytes = 0;
            self.blocked = false;
            self.next_update = at.saturating_add(self.interval);
            if self.next_update == at {
                break; // Time::MAX: no further intervals.
            }
        }
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> MsfrsConfig {
        MsfrsConfig {
            capacity: Rate::from_mbps(1),
            update_interval: Dur::from_secs(1),
            ..MsfrsConfig::default()
        }
    }

    /// Fills the window and delivers `util` of a 1 Mb/s link over the 1 s interval.
    fn run_interval(w: &mut Wrc, util: f64, now: &mut Time) -> WindowUpdate {
        while w.can_release() {
            w.on_release();
        }
        w.on_bytes((util * 125_000.0).round() as u64);
        *now += Dur::from_secs(1);
        w.on_timeout(*now, true).unwrap()
    }

    #[test]
    fn thesis_example_six_at_sixty_percent_goes_to_ten() {
        // 003 §4.3.2: W+ = 6, U = 60 %, U+ = 99 % → 9.9, "10".
        let c = MsfrsConfig {
            target_utilization: 0.99,
            initial_window: 6.0,
            ..cfg()
        };
        let mut now = Time::ZERO;
        let mut w = Wrc::new(&c, now);
        let u = run_interval(&mut w, 0.6, &mut now);
        assert!(u.binding);
        assert!((u.after - 9.9).abs() < 1e-9, "{}", u.after);
        assert_eq!(w.limit(), 10);
        let mut nearest = Wrc::new(
            &MsfrsConfig {
                window_rounding: WindowRounding::Nearest,
                ..c
            },
            Time::ZERO,
        );
        let mut now = Time::ZERO;
        assert_eq!(run_interval(&mut nearest, 0.6, &mut now).after, 10.0);
    }

    #[test]
    fn growth_is_capped_at_k_and_zero_utilisation_doubles() {
        let mut now = Time::ZERO;
        let mut w = Wrc::new(&cfg(), now);
        // U = 10 %: 0.98/0.1 = 9.8 > K = 2.
        assert_eq!(run_interval(&mut w, 0.1, &mut now).after, 2.0);
        assert_eq!(run_interval(&mut w, 0.0, &mut now).after, 4.0);
    }

    #[test]
    fn over_target_shrinks_but_never_below_the_floor() {
        let c = MsfrsConfig {
            initial_window: 10.0,
            ..cfg()
        };
        let mut now = Time::ZERO;
        let mut w = Wrc::new(&c, now);
        // U = 100 % > 98 %: W+ = 10·0.98.
        let u = run_interval(&mut w, 1.0, &mut now);
        assert!((u.after - 9.8).abs() < 1e-9);
        // W = 10 outstanding ≥ 9.8: no release until one ends, then W = 9 < 9.8 allows one.
        assert!(!w.can_release());
        let mut small = Wrc::new(&cfg(), Time::ZERO);
        let mut now = Time::ZERO;
        for _ in 0..5 {
            assert_eq!(run_interval(&mut small, 1.0, &mut now).after, 1.0);
        }
    }

    #[test]
    fn window_below_limit_freezes_w_plus() {
        // W < W+: the interval is not binding whatever U was (003 §4.3.2, Fig. 4.13).
        let c = MsfrsConfig {
            initial_window: 5.0,
            ..cfg()
        };
        let mut w = Wrc::new(&c, Time::ZERO);
        w.on_release();
        w.on_release();
        w.on_bytes(12_500); // U = 10 %
        let u = w.on_timeout(Time::from_secs(1), false).unwrap();
        assert!(!u.binding);
        assert_eq!(u.after, 5.0);
        assert!((u.utilization - 0.1).abs() < 1e-12);
        // And with the window full it moves.
        for _ in 0..3 {
            w.on_release();
        }
        w.on_bytes(62_500); // 50 %
        let u = w.on_timeout(Time::from_secs(2), true).unwrap();
        assert!(u.binding);
        assert!((u.after - 9.8).abs() < 1e-9);
    }

    #[test]
    fn nearest_rounding_can_trap_at_one_where_continuous_grows() {
        // One response filling 70 % of the link: 0.98/0.7 = 1.4.
        let mut now = Time::ZERO;
        let mut cont = Wrc::new(&cfg(), now);
        assert!((run_interval(&mut cont, 0.7, &mut now).after - 1.4).abs() < 1e-9);
        assert_eq!(cont.limit(), 2);
        let c = MsfrsConfig {
            window_rounding: WindowRounding::Nearest,
            ..cfg()
        };
        let mut now = Time::ZERO;
        let mut near = Wrc::new(&c, now);
        assert_eq!(run_interval(&mut near, 0.7, &mut now).after, 1.0);
    }

    #[test]
    fn during_interval_rule_sees_a_wait_that_ended_before_the_update() {
        let c = MsfrsConfig {
            binding: BindingRule::DuringInterval,
            ..cfg()
        };
        let mut w = Wrc::new(&c, Time::ZERO);
        w.on_release();
        w.note_blocked(); // a request waited at W = W+ = 1
        w.on_complete(); // then the window opened and the queue emptied
        w.on_bytes(62_500);
        let u = w.on_timeout(Time::from_secs(1), false).unwrap();
        assert!(u.binding);
        let mut at = Wrc::new(&cfg(), Time::ZERO);
        at.on_release();
        at.on_complete();
        assert!(!at.on_timeout(Time::from_secs(1), false).unwrap().binding);
    }

    #[test]
    fn early_timeout_is_a_no_op_and_late_one_closes_every_interval() {
        let mut w = Wrc::new(&cfg(), Time::ZERO);
        assert_eq!(w.on_timeout(Time::from_millis(999), false), None);
        assert_eq!(w.updates(), 0);
        w.on_release();
        let u = w.on_timeout(Time::from_millis(3500), true).unwrap();
        assert_eq!(w.updates(), 3);
        assert_eq!(u.at, Time::from_secs(3));
        // The first empty interval binds (W = W+ = 1): ×K = 2. Then W = 1 < 2 freezes W+.
        assert_eq!(w.window_max(), 2.0);
        assert_eq!(w.next_timeout(), Time::from_secs(4));
    }
}
