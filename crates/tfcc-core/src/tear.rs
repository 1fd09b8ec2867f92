//! TEAR, TCP Emulation At Receivers (Rhee, Ozdemir, Yi, NCSU TR 2000; 003 Table 2.1.2 and
//! App. 3): the receiver emulates TCP's window per round and the sender's rate is a weighted
//! average of the mean windows of the last 8 epochs (Eq. A3.4:
//! `R(n) = Σ_{j=1..8} c_j·W̄_{n−j}`, `Σc_j = 1`), per RTT.
//!
//! 003 gives only that outline; the rules below are the TEAR report's, in its terms:
//! - a *round* ends when as many packets have arrived as the window was at its start; the
//!   window grows by one per arrival in slow start and by `1/cwnd` in congestion avoidance;
//! - an *epoch* runs from one loss event to the next; its sample is the mean of the window
//!   over its rounds;
//! - a loss event halves the window (fast recovery) and closes the epoch;
//! - the weights are TFRC's (1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2), from the shared
//!   [`crate::loss_history::Weights`], and the open epoch counts when it raises the average
//!   (as TFRC's open interval does, which the TEAR report follows).
//!
//! Not modelled: TEAR's emulation of TCP timeouts. 003 §5.1.2 reports TEAR taking more than
//! TCP when TCP is in timeouts, which is what leaving them out gives.
//!
//! It runs on WARC's rate sender and round receiver ([`crate::warc`]).

use serde::Deserialize;

use crate::endpoint::Stats;
use crate::loss_history::Weights;
use crate::time::{Dur, Time};
use crate::warc::RoundEstimator;

/// TEAR's parameters (003 Table 2.1.2).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TearConfig {
    /// Epochs averaged (003 Table 2.1.2: 8).
    pub epochs: usize,
    /// Emulated window at the start, packets, in slow start (TCP's initial window).
    pub initial_window: f64,
    /// Slow-start threshold at the start, packets (ns-2's TCP starts with the advertised
    /// window; 003 §5 uses 200).
    pub initial_ssthresh: f64,
}

impl Default for TearConfig {
    fn default() -> Self {
        TearConfig {
            epochs: 8,               // 003 Table 2.1.2
            initial_window: 2.0,     // ns-2 windowInit_
            initial_ssthresh: 200.0, // 003 §5 maximum window
        }
    }
}

impl TearConfig {
    /// Checks every field; the message is `field: why`.
    pub fn validate(&self) -> Result<(), String> {
        if self.epochs == 0 || self.epochs > 1024 {
            return Err(format!("epochs: must be in 1..=1024, got {}", self.epochs));
        }
        if !(self.initial_window.is_finite() && self.initial_window >= 1.0) {
            return Err(format!(
                "initial_window: at least 1, got {}",
                self.initial_window
            ));
        }
        if !(self.initial_ssthresh.is_finite() && self.initial_ssthresh >= 1.0) {
            return Err(format!(
                "initial_ssthresh: at least 1, got {}",
                self.initial_ssthresh
            ));
        }
        Ok(())
    }
}

/// TEAR's receiver-side state.
#[derive(Clone, Debug)]
pub struct Tear {
    weights: Vec<f64>,
    cwnd: f64,
    ssthresh: f64,
    /// Window at the start of the current round and arrivals counted in it.
    round_window: f64,
    round_arrivals: f64,
    /// Sum and count of round windows in the open epoch.
    epoch_sum: f64,
    epoch_rounds: u64,
    /// Closed epochs' mean windows, newest first.
    epochs: std::collections::VecDeque<f64>,
    loss_events: u64,
}

impl Tear {
    pub fn new(cfg: TearConfig) -> Tear {
        let n = cfg.epochs.max(1);
        let weights = Weights::Rfc5348.resolve(n).unwrap_or_else(|_| vec![1.0; n]);
        let cwnd = cfg.initial_window.max(1.0);
        Tear {
            weights,
            cwnd,
            ssthresh: cfg.initial_ssthresh.max(1.0),
            round_window: cwnd,
            round_arrivals: 0.0,
            epoch_sum: 0.0,
            epoch_rounds: 0,
            epochs: std::collections::VecDeque::with_capacity(n + 1),
            loss_events: 0,
        }
    }

    /// The emulated window.
    pub fn window(&self) -> f64 {
        self.cwnd
    }

    fn weighted(&self, open: Option<f64>) -> f64 {
        let values = open.into_iter().chain(self.epochs.iter().copied());
        let (mut num, mut den) = (0.0, 0.0);
        for (v, w) in values.zip(&self.weights) {
            num += v * w;
            den += w;
        }
        if den > 0.0 {
            num / den
        } else {
            self.cwnd
        }
    }

    /// The rate in packets per RTT: the weighted mean of the last epochs, with the open epoch
    /// when that is larger; the emulated window itself before the first loss.
    pub fn rate(&self) -> f64 {
        if self.epochs.is_empty() {
            return self.cwnd;
        }
        let closed = self.weighted(None);
        if self.epoch_rounds > 0 {
            let open = self.epoch_sum / self.epoch_rounds as f64;
            closed.max(self.weighted(Some(open)))
        } else {
            closed
        }
    }
}

impl RoundEstimator for Tear {
    fn on_received(&mut self) {
        if self.cwnd < self.ssthresh {
            self.cwnd += 1.0;
        } else {
            self.cwnd += 1.0 / self.cwnd;
        }
        self.round_arrivals += 1.0;
        if self.round_arrivals >= self.round_window {
            self.epoch_sum += self.round_window;
            self.epoch_rounds += 1;
            self.round_window = self.cwnd;
            self.round_arrivals = 0.0;
        }
    }

    fn on_loss_event(&mut self, _u: u32) {
        self.loss_events += 1;
        let mean = if self.epoch_rounds > 0 {
            self.epoch_sum / self.epoch_rounds as f64
        } else {
            self.cwnd
        };
        self.epochs.push_front(mean);
        self.epochs.truncate(self.weights.len());
        self.cwnd = (self.cwnd / 2.0).max(1.0);
        self.ssthresh = self.cwnd.max(2.0);
        self.round_window = self.cwnd;
        self.round_arrivals = 0.0;
        self.epoch_sum = 0.0;
        self.epoch_rounds = 0;
    }

    fn on_round(&mut self, _now: Time, _rtt: Dur, _rto: Dur) -> f64 {
        self.rate()
    }

    fn current(&self) -> f64 {
        self.rate()
    }

    fn fill_stats(&self, s: &mut Stats) {
        s.cwnd = Some(self.cwnd);
        s.loss_events = self.loss_events;
        s.mode = if self.cwnd < self.ssthresh {
            "slowstart"
        } else {
            "congestion-avoidance"
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrivals(t: &mut Tear, n: u64) {
        for _ in 0..n {
            t.on_received();
        }
    }

    #[test]
    fn the_window_doubles_per_round_in_slow_start_then_grows_by_one() {
        let mut t = Tear::new(TearConfig {
            initial_ssthresh: 8.0,
            ..TearConfig::default()
        });
        arrivals(&mut t, 2); // round of 2 → 4
        assert_eq!(t.window(), 4.0);
        arrivals(&mut t, 4); // → 8, now in congestion avoidance
        assert_eq!(t.window(), 8.0);
        arrivals(&mut t, 8);
        assert!((t.window() - 9.0).abs() < 0.1, "{}", t.window());
    }

    #[test]
    fn the_rate_is_the_weighted_mean_of_epoch_means() {
        let mut t = Tear::new(TearConfig::default());
        // Eight epochs whose mean windows are known exactly: one round of w each.
        for (i, w) in [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]
            .into_iter()
            .enumerate()
        {
            t.epochs.push_front(w);
            let _ = i;
        }
        // Newest first: 80..10 with weights 1,1,1,1,.8,.6,.4,.2 (sum 6).
        let expect =
            (80.0 + 70.0 + 60.0 + 50.0 + 0.8 * 40.0 + 0.6 * 30.0 + 0.4 * 20.0 + 0.2 * 10.0) / 6.0;
        assert!((t.rate() - expect).abs() < 1e-9, "{} vs {expect}", t.rate());
    }

    #[test]
    fn periodic_loss_gives_the_tcp_mean_window() {
        // A loss event every 400 packets: TCP's sawtooth mean ≈ 24.5 packets per RTT.
        let mut t = Tear::new(TearConfig::default());
        for _ in 0..200 {
            arrivals(&mut t, 400);
            t.on_loss_event(1);
        }
        let r = t.rate();
        assert!((r - 24.5).abs() < 2.0, "{r}");
    }
}
