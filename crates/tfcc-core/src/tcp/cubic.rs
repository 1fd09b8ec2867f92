//! CUBIC (RFC 9438, "CUBIC for Fast and Long-Distance Networks") as a congestion control of
//! [`super::TcpSender`]: the window increase in congestion avoidance and the decrease on a loss
//! or a timeout. Slow start and loss recovery stay the sender's (ns-2's, [`super::Variant`]).
//!
//! Thesis 000 compares TTFWC with Reno and CUBIC on its Linux testbed (Sec. 5.2, Figs.
//! 5.11-5.18), where CUBIC is the kernel's; this is the RFC's algorithm for the simulator, so
//! the same comparisons run there. Windows are in segments (the sender's `cwnd`), times in
//! seconds.
//!
//! - **Window growth** (RFC 9438 §4.2): `W_cubic(t) = C·(t − K)³ + W_max`, with `t` the time
//!   since the congestion-avoidance stage began (`t_epoch`) and
//!   `K = ∛((W_max − cwnd_epoch)/C)`, which is `∛(W_max·(1 − β_cubic)/C)` right after a loss.
//!   Per ACK the target is `W_cubic(t + RTT)` (RTT the smoothed RTT) clamped to
//!   `[cwnd, 1.5·cwnd]`, and `cwnd += (target − cwnd)/cwnd`.
//! - **Reno-friendly region** (§4.3): `W_est` starts at `cwnd_epoch` and grows by
//!   `α_cubic·segments_acked/cwnd` per ACK, `α_cubic = 3(1 − β_cubic)/(1 + β_cubic)`, and by 1
//!   per RTT (α = 1) once `W_est ≥ cwnd_prior`; when `W_cubic(t) < W_est`, cwnd is set to
//!   `W_est`. The switch to α = 1 is RFC 9438's ("SHOULD"); Linux's module (the 2.6 kernels'
//!   and 3.0's, which thesis 000 ran) keeps α_cubic throughout (`alpha_one_above_prior`).
//! - **Multiplicative decrease** (§4.6): `ssthresh = cwnd·β_cubic` (at least 2 segments),
//!   `cwnd = ssthresh`; `cwnd_prior` and `W_max` are the window at the loss.
//! - **Fast convergence** (§4.7): a loss below the previous `W_max` sets
//!   `W_max = cwnd·(1 + β_cubic)/2`, releasing bandwidth to newer flows.
//! - **Timeout** (§4.8): `ssthresh` as on a loss, `cwnd` back to one segment (RFC 5681); the
//!   first congestion-avoidance stage afterwards runs with `K = 0` and `W_max` (and `W_est`) the
//!   window at which that stage starts.
//!
//! The sender's window is measured after the ns-2 model's unrounded `cwnd` (`precisionReduce_`);
//! the RFC's `flight_size` at a loss is read as that window, as Linux's CUBIC does
//! (`snd_cwnd`, `bictcp_recalc_ssthresh`).

use crate::time::{Dur, Time};
use serde::Deserialize;

/// CUBIC's constants; every default is RFC 9438's.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicConfig {
    /// `C`, the aggressiveness of the cubic function, in segments/s³ (RFC 9438 §5: 0.4).
    pub c: f64,
    /// `β_cubic`, the multiplicative decrease factor (RFC 9438 §4.6: 0.7).
    pub beta: f64,
    /// `α_cubic` of the Reno-friendly estimate; `None` (the default) is RFC 9438 §4.3's
    /// `3(1 − β_cubic)/(1 + β_cubic)`, which makes CUBIC's average window equal Reno's (AIMD
    /// with increase 1 and decrease 0.5) at the same loss rate.
    pub alpha: Option<f64>,
    /// Fast convergence (RFC 9438 §4.7, on by default: "SHOULD").
    pub fast_convergence: bool,
    /// The Reno-friendly region (RFC 9438 §4.3, on by default).
    pub reno_friendly: bool,
    /// The most the target may exceed cwnd per RTT, as a factor of cwnd (RFC 9438 §4.2:
    /// target ≤ 1.5·cwnd).
    pub max_target_growth: f64,
    /// RFC 9438 §4.3: once `W_est ≥ cwnd_prior` the estimate grows by 1 per RTT (α = 1, "SHOULD",
    /// on by default). `false` keeps `α_cubic` throughout, as Linux's `tcp_cubic.c` does (its
    /// `tcp_friendliness` estimate grows by `8/beta_scale` per RTT whatever the window: 8/15 ≈
    /// 0.53 in Linux 3.0, thesis 000's testbed kernel, 8/23 ≈ 0.35 with the 2.6 kernels' β
    /// 819/1024 in ns-2.35's `Agent/TCP/Linux`); the thesis is silent, the RFC is the default.
    pub alpha_one_above_prior: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,                      // RFC 9438 §5
            beta: 0.7,                   // RFC 9438 §4.6
            alpha: None,                 // RFC 9438 §4.3: 3(1 − β)/(1 + β)
            fast_convergence: true,      // RFC 9438 §4.7
            reno_friendly: true,         // RFC 9438 §4.3
            max_target_growth: 1.5,      // RFC 9438 §4.2
            alpha_one_above_prior: true, // RFC 9438 §4.3
        }
    }
}

impl CubicConfig {
    /// The field names, for a loader that reads them from a table shared with the TCP's own
    /// (`protocol = "tcp-cubic"` in a scenario).
    pub const FIELDS: &'static [&'static str] = &[
        "c",
        "beta",
        "alpha",
        "fast_convergence",
        "reno_friendly",
        "max_target_growth",
        "alpha_one_above_prior",
    ];

    /// `α_cubic` in use (RFC 9438 §4.3).
    pub fn alpha(&self) -> f64 {
        self.alpha
            .unwrap_or(3.0 * (1.0 - self.beta) / (1.0 + self.beta))
    }

    /// Checks every field; the message names the first bad one.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(format!("c must be a positive number, got {}", self.c));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta must lie in (0, 1), got {}", self.beta));
        }
        if let Some(a) = self.alpha {
            if !(a.is_finite() && a > 0.0) {
                return Err(format!("alpha must be a positive number, got {a}"));
            }
        }
        if !(self.max_target_growth.is_finite() && self.max_target_growth >= 1.0) {
            return Err(format!(
                "max_target_growth must be at least 1, got {}",
                self.max_target_growth
            ));
        }
        Ok(())
    }
}

/// The congestion-avoidance stage in progress (RFC 9438 §4.2, "epoch").
/// `K = ∛((W_max − cwnd_epoch)/C)` (RFC 9438 §4.2), 0 from `W_max` up.
fn k_of(c: f64, w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / c).cbrt()
}

#[derive(Clone, Debug, PartialEq)]
struct Epoch {
    /// `t_epoch`.
    start: Time,
    /// `K`, seconds.
    k: f64,
    /// `W_max` for this stage.
    w_max: f64,
    /// `W_est`, the Reno-friendly estimate (§4.3).
    w_est: f64,
}

/// CUBIC's state for one sender.
#[derive(Clone, Debug, PartialEq)]
pub struct Cubic {
    cfg: CubicConfig,
    /// `W_max`: the window just before the last reduction (after fast convergence); 0 before
    /// the first.
    w_max: f64,
    /// `cwnd_prior`: the window just before the last reduction (§4.3's switch to α = 1).
    cwnd_prior: f64,
    /// The last reduction was a timeout: the next stage runs with K = 0 (§4.8).
    after_timeout: bool,
    epoch: Option<Epoch>,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Cubic {
        Cubic {
            cfg,
            w_max: 0.0,
            cwnd_prior: 0.0,
            after_timeout: false,
            epoch: None,
        }
    }

    pub fn config(&self) -> &CubicConfig {
        &self.cfg
    }

    /// `W_max` (segments), 0 before the first reduction.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// `K` of the stage in progress (seconds), if one is.
    pub fn k(&self) -> Option<f64> {
        self.epoch.as_ref().map(|e| e.k)
    }

    /// `K = ∛((W_max − cwnd_epoch)/C)` (RFC 9438 §4.2, Figure 2), 0 when the stage starts at
    /// or above `W_max`.
    pub fn k_for(&self, w_max: f64, cwnd_epoch: f64) -> f64 {
        k_of(self.cfg.c, w_max, cwnd_epoch)
    }

    /// `W_cubic(t)` of the stage in progress, `t` seconds after it began (RFC 9438 Figure 1).
    pub fn w_cubic(&self, t: f64) -> Option<f64> {
        self.epoch
            .as_ref()
            .map(|e| self.cfg.c * (t - e.k).powi(3) + e.w_max)
    }

    /// The congestion-avoidance increase for one new ACK that acknowledged `acked` segments,
    /// at `now`, with the smoothed RTT `srtt` (none yet: 0). Returns the new cwnd.
    pub fn on_ack(&mut self, now: Time, acked: u64, cwnd: f64, srtt: Option<Dur>) -> f64 {
        let cwnd = cwnd.max(1.0);
        let (c, alpha_cubic) = (self.cfg.c, self.cfg.alpha());
        let alpha_one = self.cfg.alpha_one_above_prior;
        let e = match &mut self.epoch {
            Some(e) => e,
            slot @ None => {
                // A new stage begins (§4.2; §4.8 after a timeout).
                let (k, w_max) = if self.after_timeout || self.w_max <= cwnd {
                    (0.0, cwnd)
                } else {
                    (k_of(c, self.w_max, cwnd), self.w_max)
                };
                self.after_timeout = false;
                slot.insert(Epoch {
                    start: now,
                    k,
                    w_max,
                    w_est: cwnd,
                })
            }
        };
        let w_cubic = |t: f64| c * (t - e.k).powi(3) + e.w_max;
        let t = now.saturating_since(e.start).as_secs_f64();
        let rtt = srtt.map_or(0.0, |d| d.as_secs_f64());
        let (w_now, w_next) = (w_cubic(t), w_cubic(t + rtt));
        // §4.2: the target for the next RTT, within [cwnd, 1.5·cwnd].
        let target = w_next.clamp(cwnd, self.cfg.max_target_growth * cwnd);
        let mut next = cwnd + (target - cwnd) / cwnd;
        if self.cfg.reno_friendly {
            // §4.3: W_est grows by α_cubic per RTT, by 1 once it reached cwnd_prior.
            let alpha = if alpha_one && e.w_est >= self.cwnd_prior {
                1.0
            } else {
                alpha_cubic
            };
            e.w_est += alpha * acked as f64 / cwnd;
            if w_now < e.w_est {
                next = e.w_est;
            }
        }
        next
    }

    /// A loss detected by duplicate ACKs at window `w` (segments): returns `(ssthresh, cwnd)`
    /// (RFC 9438 §4.6, with §4.7's fast convergence), `ssthresh` at least 2 segments.
    pub fn on_loss(&mut self, w: f64) -> (f64, f64) {
        self.reduce(w);
        let th = (w * self.cfg.beta).max(2.0);
        (th, th)
    }

    /// A retransmission timeout at window `w`: returns `ssthresh` (RFC 9438 §4.8); cwnd
    /// restarts at one segment and the next stage begins with K = 0.
    pub fn on_timeout(&mut self, w: f64) -> f64 {
        self.reduce(w);
        self.after_timeout = true;
        (w * self.cfg.beta).max(2.0)
    }

    fn reduce(&mut self, w: f64) {
        self.epoch = None;
        self.cwnd_prior = w;
        self.w_max = if self.cfg.fast_convergence && w < self.w_max {
            w * (1.0 + self.cfg.beta) / 2.0
        } else {
            w
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Time {
        Time::ZERO + Dur::from_secs_f64(s)
    }

    #[test]
    fn k_after_a_loss_is_the_cube_root_of_w_max_times_one_minus_beta_over_c() {
        // W_max = 100: K = ∛(100 · 0.3 / 0.4) = ∛75 = 4.2172 s.
        let mut c = Cubic::new(CubicConfig::default());
        let (th, cwnd) = c.on_loss(100.0);
        assert!((th - 70.0).abs() < 1e-12 && (cwnd - 70.0).abs() < 1e-12);
        assert_eq!(c.w_max(), 100.0);
        c.on_ack(secs(1.0), 1, cwnd, None);
        let k = c.k().unwrap();
        assert!((k - 75f64.cbrt()).abs() < 1e-12, "{k}");
        assert!((k - 4.217_163).abs() < 1e-6, "{k}");
        // W_cubic(0) = cwnd_epoch = 70, W_cubic(K) = W_max = 100.
        assert!((c.w_cubic(0.0).unwrap() - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k).unwrap() - 100.0).abs() < 1e-12);
        // 2 s after the loss: 0.4 · (2 − 4.2172)³ + 100 = 95.64 segments (concave region);
        // 6 s: 0.4 · (6 − 4.2172)³ + 100 = 102.27 (convex region).
        assert!((c.w_cubic(2.0).unwrap() - 95.640_9).abs() < 1e-3);
        assert!((c.w_cubic(6.0).unwrap() - 102.266_8).abs() < 1e-3);
    }

    #[test]
    fn the_per_ack_increase_moves_cwnd_toward_the_target_one_rtt_ahead() {
        let mut c = Cubic::new(CubicConfig {
            reno_friendly: false,
            ..CubicConfig::default()
        });
        let (_, cwnd) = c.on_loss(100.0);
        let rtt = Some(Dur::from_millis(100));
        // First ACK of the stage at t = 0: target W_cubic(0.1) = 0.4 (0.1 − 4.2172)³ + 100
        // = 72.0839, so cwnd = 70 + 2.0839 / 70.
        let next = c.on_ack(secs(10.0), 1, cwnd, rtt);
        let target = 0.4 * (0.1 - 75f64.cbrt()).powi(3) + 100.0;
        assert!((target - 72.083_9).abs() < 1e-3);
        assert!(
            (next - (70.0 + (target - 70.0) / 70.0)).abs() < 1e-12,
            "{next}"
        );
        // Far in the convex region the target is capped at 1.5 cwnd: + 0.5 per ACK.
        let far = c.on_ack(secs(40.0), 1, 100.0, rtt);
        assert!((far - 100.5).abs() < 1e-12, "{far}");
        // A target below cwnd leaves it unchanged.
        assert_eq!(c.on_ack(secs(10.0), 1, 99.0, rtt), 99.0);
    }

    #[test]
    fn alpha_makes_the_estimate_reno_friendly_and_takes_over_at_small_windows() {
        let cfg = CubicConfig::default();
        // α = 3 · 0.3 / 1.7 = 0.5294.
        assert!((cfg.alpha() - 0.529_411_8).abs() < 1e-6);
        // At W_max = 10 (a small BDP) K = ∛7.5 = 1.957 s; after 2 s with an RTT of 10 ms
        // (200 RTTs of 7 ACKs) W_est = 7 + 200 · α = 112.9 > W_cubic(2) = 10.00003.
        let mut c = Cubic::new(cfg);
        let (_, mut cwnd) = c.on_loss(10.0);
        let rtt = Some(Dur::from_millis(10));
        let mut now = 0.0;
        cwnd = c.on_ack(secs(now), 1, cwnd, rtt);
        let start = cwnd;
        // One RTT of ACKs: W_est grows by α (while below cwnd_prior = 10), and cwnd follows it
        // since W_cubic is still close to 7.
        for _ in 0..7 {
            now += 0.01 / 7.0;
            cwnd = c.on_ack(secs(now), 1, cwnd, rtt);
        }
        let reno_rate = cwnd - start;
        assert!(
            (reno_rate - 0.529).abs() < 0.06,
            "Reno-friendly growth {reno_rate} per RTT"
        );
        // Without the region the cubic curve alone grows far less in the first RTT.
        let mut pure = Cubic::new(CubicConfig {
            reno_friendly: false,
            ..CubicConfig::default()
        });
        let (_, mut w) = pure.on_loss(10.0);
        let mut t = 0.0;
        w = pure.on_ack(secs(t), 1, w, rtt);
        let w0 = w;
        for _ in 0..7 {
            t += 0.01 / 7.0;
            w = pure.on_ack(secs(t), 1, w, rtt);
        }
        assert!(w - w0 < 0.1, "cubic alone {}", w - w0);
    }

    #[test]
    fn the_estimate_grows_by_one_per_rtt_above_cwnd_prior_unless_linux_s_rule_is_chosen() {
        // A loss at 10: cwnd 7, cwnd_prior 10. Start the stage at cwnd 10 (as after a reduction
        // the window reached cwnd_prior again), W_max 10 so K = 0 and W_cubic stays near 10 for
        // the first 10-ms RTT: the estimate decides the growth.
        let grow = |alpha_one_above_prior: bool| {
            let mut c = Cubic::new(CubicConfig {
                alpha_one_above_prior,
                ..CubicConfig::default()
            });
            c.on_loss(10.0);
            let rtt = Some(Dur::from_millis(10));
            let mut cwnd = c.on_ack(secs(0.0), 1, 10.0, rtt);
            let start = cwnd;
            let mut now = 0.0;
            for _ in 0..10 {
                now += 0.001;
                cwnd = c.on_ack(secs(now), 1, cwnd, rtt);
            }
            cwnd - start
        };
        // RFC 9438 §4.3: W_est ≥ cwnd_prior = 10, so α = 1: about one segment per RTT of 10
        // ACKs (each adds 1/cwnd, and cwnd grows to 11 meanwhile: 0.95).
        let rfc = grow(true);
        assert!(rfc > 0.9 && rfc <= 1.0, "RFC: {rfc} per RTT");
        // Linux keeps α_cubic = 0.529 (0.529 · 10/10.25 with the growing cwnd).
        let linux = grow(false);
        assert!(linux > 0.49 && linux <= 0.53, "Linux: {linux} per RTT");
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_the_last() {
        let mut c = Cubic::new(CubicConfig::default());
        c.on_loss(100.0);
        assert_eq!(c.w_max(), 100.0);
        // Loss at 80 < 100: W_max = 80 · 1.7 / 2 = 68.
        c.on_loss(80.0);
        assert!((c.w_max() - 68.0).abs() < 1e-12);
        // Above the last W_max: W_max is the window.
        c.on_loss(120.0);
        assert_eq!(c.w_max(), 120.0);
        let mut off = Cubic::new(CubicConfig {
            fast_convergence: false,
            ..CubicConfig::default()
        });
        off.on_loss(100.0);
        off.on_loss(80.0);
        assert_eq!(off.w_max(), 80.0);
    }

    #[test]
    fn after_a_timeout_the_next_stage_has_k_zero_from_its_own_window() {
        let mut c = Cubic::new(CubicConfig::default());
        assert!((c.on_timeout(50.0) - 35.0).abs() < 1e-12);
        // Slow start back to 35, then congestion avoidance: K = 0, W_max = 35.
        c.on_ack(secs(3.0), 1, 35.0, Some(Dur::from_millis(100)));
        assert_eq!(c.k(), Some(0.0));
        assert!((c.w_cubic(0.0).unwrap() - 35.0).abs() < 1e-12);
        assert!((c.w_cubic(1.0).unwrap() - 35.4).abs() < 1e-12);
    }

    #[test]
    fn bad_constants_are_rejected_by_name() {
        let bad = |f: fn(&mut CubicConfig)| {
            let mut c = CubicConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(bad(|c| c.c = 0.0).contains("c must"));
        assert!(bad(|c| c.beta = 1.0).contains("beta"));
        assert!(bad(|c| c.alpha = Some(-1.0)).contains("alpha"));
        assert!(bad(|c| c.max_target_growth = 0.5).contains("max_target_growth"));
        assert_eq!(CubicConfig::default().validate(), Ok(()));
    }
}
