//! TFRCP, the TCP-friendly rate control protocol (Padhye, Kurose, Towsley, Koodli, NOSSDAV
//! 1999; 003 Table 2.1.2, Sec. 2.3 and App. 3): at the end of each fixed interval (5 s) the
//! rate becomes the PFTK rate at the loss ratio measured over that interval, or doubles if the
//! interval had no loss. Non-historical, super-linear aggressiveness; fixed-history
//! responsiveness (003 Table 2.2).
//!
//! Placement: the paper's receiver reports the interval's loss statistics and the sender
//! evaluates the model; here the receiver evaluates it (with the SRTT and RTO the sender
//! carries) and reports the rate, so TFRCP runs on WARC's rate sender and round receiver
//! ([`crate::warc`]). The rate and the decisions are the same; only where the arithmetic runs
//! differs. The loss ratio is lost packets over packets (the paper's `p`), not loss events.

use serde::Deserialize;

use crate::endpoint::Stats;
use crate::equation::Equation;
use crate::time::{Dur, Time};
use crate::warc::RoundEstimator;

/// TFRCP's parameters.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TfrcpConfig {
    /// The rate-adjustment interval (003 Table 2.1.2: 5 s).
    pub period: Dur,
    /// Rate before the first adjustment, packets per RTT (the paper starts small; 2 is TCP's
    /// initial window in ns-2).
    pub initial_rate: f64,
    /// Upper bound on the rate, packets per RTT (003 §5's maximum window of 200), so that
    /// doubling after idle intervals cannot run away.
    pub max_rate: f64,
}

impl Default for TfrcpConfig {
    fn default() -> Self {
        TfrcpConfig {
            period: Dur::from_secs(5), // 003 Table 2.1.2
            initial_rate: 2.0,         // ns-2 windowInit_
            max_rate: 200.0,           // 003 §5
        }
    }
}

impl TfrcpConfig {
    /// Checks every field; the message is `field: why`.
    pub fn validate(&self) -> Result<(), String> {
        if self.period.is_zero() {
            return Err("period: must be positive".into());
        }
        if !(self.initial_rate.is_finite() && self.initial_rate > 0.0) {
            return Err(format!(
                "initial_rate: must be positive, got {}",
                self.initial_rate
            ));
        }
        if !(self.max_rate.is_finite() && self.max_rate >= self.initial_rate) {
            return Err(format!(
                "max_rate: must be at least initial_rate, got {}",
                self.max_rate
            ));
        }
        Ok(())
    }
}

/// TFRCP's receiver-side state.
#[derive(Clone, Debug)]
pub struct Tfrcp {
    cfg: TfrcpConfig,
    equation: Equation,
    rate: f64,
    period_start: Option<Time>,
    received: u64,
    lost: u64,
    last_p: Option<f64>,
    adjustments: u64,
}

impl Tfrcp {
    pub fn new(cfg: TfrcpConfig) -> Tfrcp {
        Tfrcp {
            rate: cfg.initial_rate,
            cfg,
            equation: Equation::pftk(),
            period_start: None,
            received: 0,
            lost: 0,
            last_p: None,
            adjustments: 0,
        }
    }

    /// The rate in packets per RTT.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// One adjustment with the interval's counts: double after a loss-free interval, else the
    /// PFTK window `X·R/s` at the interval's loss ratio with the RTO the sender uses.
    ///
    /// `T_RTO` is the rate sender's TCP RTO estimate, floor included (ns-2.1b9's 1 s under
    /// `tcp_defaults = "ns-2.1b9"`): PFTK's `T_0` is the timeout of the TCP it models, and with
    /// the floor TFRCP settles at 0.88 of the TCP beside it in E2.3, without it at 1.7
    /// (docs/reproductions/log/taxonomy.md, "TFRCP's slow fall traced"). The floor also makes the
    /// timeout term weigh more, which slows the 5-s fixed-point iteration after a rise in loss.
    pub fn adjust(&mut self, received: u64, lost: u64, rtt: Dur, rto: Dur) {
        self.adjustments += 1;
        let total = received + lost;
        self.rate = if lost == 0 {
            self.last_p = Some(0.0);
            self.rate * 2.0
        } else {
            let p = lost as f64 / total as f64;
            self.last_p = Some(p);
            let r = rtt.as_secs_f64();
            if r > 0.0 {
                self.equation
                    .rate_with_rto(1.0, r, rto.as_secs_f64().max(r), p)
                    * r
            } else {
                self.equation.window(p)
            }
        }
        .clamp(1e-3, self.cfg.max_rate);
    }
}

impl RoundEstimator for Tfrcp {
    fn on_received(&mut self) {
        self.received += 1;
    }
    fn on_lost(&mut self) {
        self.lost += 1;
    }
    fn on_loss_event(&mut self, _u: u32) {}

    fn on_round(&mut self, now: Time, rtt: Dur, rto: Dur) -> f64 {
        let start = *self.period_start.get_or_insert(now);
        if now.saturating_since(start) >= self.cfg.period {
            let (r, l) = (self.received, self.lost);
            self.adjust(r, l, rtt, rto);
            self.received = 0;
            self.lost = 0;
            self.period_start = Some(now);
        }
        self.rate
    }

    fn current(&self) -> f64 {
        self.rate
    }

    fn fill_stats(&self, s: &mut Stats) {
        s.cwnd = Some(self.rate);
        s.p = self.last_p;
        s.mode = "tfrcp";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_free_interval_doubles_the_rate() {
        let mut t = Tfrcp::new(TfrcpConfig::default());
        t.adjust(100, 0, Dur::from_millis(100), Dur::from_millis(400));
        assert_eq!(t.rate(), 4.0);
        t.adjust(100, 0, Dur::from_millis(100), Dur::from_millis(400));
        assert_eq!(t.rate(), 8.0);
    }

    #[test]
    fn a_lossy_interval_sets_the_pftk_window() {
        let mut t = Tfrcp::new(TfrcpConfig::default());
        // p = 0.01, RTO = 4 RTT, RFC 5348's PFTK: f = √(2p/3) + 4·3√(3p/8)·p·(1 + 32p²)
        // = 0.08165 + 0.00737 = 0.08902, so the window is 11.23 packets per RTT.
        t.adjust(990, 10, Dur::from_millis(100), Dur::from_millis(400));
        assert!((t.rate() - Equation::pftk().window(0.01)).abs() < 1e-9);
        assert!((t.rate() - 11.23).abs() < 0.01, "{}", t.rate());
    }

    #[test]
    fn the_period_is_five_seconds() {
        let mut t = Tfrcp::new(TfrcpConfig::default());
        let rtt = Dur::from_millis(100);
        let mut now = Time::ZERO;
        for _ in 0..50 {
            t.on_received();
            t.on_round(now, rtt, rtt * 4);
            now += rtt;
        }
        assert_eq!(t.rate(), 2.0, "not before 5 s"); // rounds at 0 … 4.9 s
        t.on_round(now, rtt, rtt * 4);
        assert_eq!(t.rate(), 4.0);
    }
}
