//! Loss-event-rate estimators: TFRC's weighted average loss interval (ALI) with the
//! current-interval rule and history discounting, and the two estimators 004 Sec. 3.4.1 rejects
//! (the dynamic history window and the EWMA of loss intervals), all behind [`LossEstimator`].
//!
//! # Counting convention
//!
//! A loss interval is counted in packets, not time (004 Sec. 3.4, spec 004 §2.5): every sequence
//! number, received or lost, from the packet that started one loss event up to (not including)
//! the packet that started the next. The open interval therefore counts the packet that started
//! the most recent loss event, as TFWC's `h[0] = 1` does (spec 002 §2.2), so a loss event every
//! 100 packets gives intervals of exactly 100 and every other packet lost gives intervals of 2
//! (002 App. A). Before the first loss event the open interval counts the packets judged so
//! far; what becomes of that run is [`FirstRun`].
//!
//! # Feeding
//!
//! Estimators see packets in sequence order, already judged and grouped (see
//! [`crate::loss_events`]): [`LossEstimator::on_packets`] for packets that extend the open
//! interval (received, or lost inside the open loss event: both only lengthen it) and
//! [`LossEstimator::on_loss_event`] for a lost packet that starts a new loss event.

use std::collections::VecDeque;
use thiserror::Error;

/// What one judged packet means for the loss history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketOutcome {
    /// Arrived.
    Received,
    /// Lost, but within one RTT of the start of the open loss event, so part of that event.
    Lost,
    /// Lost, and more than one RTT after the start of the previous loss event: a new event.
    NewLossEvent,
}

/// A loss-event-rate estimator, fed with judged packets in sequence order.
///
/// Protocols and experiments hold one of these without knowing which estimator it is; the
/// simulator's hot path uses the enum [`AnyEstimator`] rather than a trait object.
pub trait LossEstimator {
    /// `count` consecutive packets that lengthen the open interval without starting a loss
    /// event (received, or lost inside the open event). Bulk form so that a long run costs O(1).
    fn on_packets(&mut self, count: u64);

    /// One lost packet that starts a new loss event: the open interval closes and a new one
    /// starts, counting this packet.
    fn on_loss_event(&mut self);

    /// Per-packet convenience over [`Self::on_packets`] and [`Self::on_loss_event`].
    fn on_packet(&mut self, outcome: PacketOutcome) {
        match outcome {
            PacketOutcome::NewLossEvent => self.on_loss_event(),
            PacketOutcome::Received | PacketOutcome::Lost => self.on_packets(1),
        }
    }

    /// Replace the closed history by one synthetic interval of `interval` packets: TFRC after
    /// slowstart (004 Sec. 3.6.2, `1/l_exp(b_sst/2)`), TFWC on its first loss (002 Alg. 2).
    /// Call it right after the [`Self::on_loss_event`] that triggered it, so the open interval
    /// keeps counting from that event. Called before any loss event, it ends the pre-loss run:
    /// the open interval restarts at zero (slowstart packets do not reflect the loss rate,
    /// 004 Sec. 3.6.2). Values below one packet are raised to one; NaN is ignored.
    fn seed(&mut self, interval: f64);

    /// The loss rate the throughput equation expects at the current sending rate and RTT
    /// (004 Eq. 3.4's `l_exp`). Only the dynamic history window uses it; `None` makes it fall
    /// back to its own previous estimate.
    fn set_expected_loss_rate(&mut self, _l_exp: Option<f64>) {}

    /// The average loss interval in packets; `None` until the history holds a complete
    /// interval (before any loss event, or after a first event with nothing before it and no
    /// seed).
    fn average_loss_interval(&self) -> Option<f64>;

    /// The loss event rate `p = 1/ALI` (004 Sec. 3.4.1; 002 Eq. 3.5).
    fn loss_event_rate(&self) -> Option<f64> {
        self.average_loss_interval().map(|ali| 1.0 / ali)
    }

    /// Loss events seen (seeds not counted).
    fn loss_events(&self) -> u64;

    /// Packets in the open interval (since the start of the latest loss event, that packet
    /// included; before any event, since the start or the last seed).
    fn open_interval(&self) -> u64;

    /// Forget everything, as if newly built.
    fn reset(&mut self);
}

/// What happens to the packets judged before the first loss event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FirstRun {
    /// They form the first closed interval, as if the flow had started just after a loss
    /// event (an empty run forms none). This gives an estimate as soon as the first event
    /// closes it; a protocol that seeds overwrites it. The theses seed instead (004 Sec. 3.6.2,
    /// 002 Alg. 2) but an estimator used on its own must answer something.
    #[default]
    AsInterval,
    /// They are dropped: only a seed or the second loss event gives a first interval
    /// (RFC 5348 §6.3.1 never uses the run either: it synthesises the first interval).
    Discard,
}

/// The per-interval weights `w_0..w_{n-1}` of 004 Eq. 3.6 (`w_0` on the newest interval).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Weights {
    /// RFC 5348 §5.4's rule for any n: `w_i = 1` for `i < n/2`, else
    /// `1 − (i − (n/2 − 1))/(n/2 + 1)`. At n = 8 this is 004 Table 3.1
    /// (1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2). For odd n, `n/2` is taken as a real number so the
    /// newest weight stays 1 and the oldest stays positive (`1/(n/2 + 1)`).
    #[default]
    Rfc5348,
    /// Choi's TFWC/TTFWC code (spec 000 §2.1, spec 002 §2.2 \[X\]): `w_i = 1` for `i < 4`, else
    /// `2/(i − 1)`. At n = 16: 1, 1, 1, 1, .667, .5, .4, .333, …, .143, summing to 7.503.
    Choi,
    /// Explicit weights, exactly n of them, finite, non-negative, `w_0 > 0`.
    Custom(Vec<f64>),
}

impl Weights {
    /// The n weights, or an error if they cannot form an average.
    pub fn resolve(&self, n: usize) -> Result<Vec<f64>, ConfigError> {
        let w: Vec<f64> = match self {
            Weights::Rfc5348 => {
                let half = n as f64 / 2.0;
                (0..n)
                    .map(|i| {
                        let i = i as f64;
                        if i < half {
                            1.0
                        } else {
                            1.0 - (i - (half - 1.0)) / (half + 1.0)
                        }
                    })
                    .collect()
            }
            Weights::Choi => (0..n)
                .map(|i| if i < 4 { 1.0 } else { 2.0 / (i as f64 - 1.0) })
                .collect(),
            Weights::Custom(w) => {
                if w.len() != n {
                    return Err(ConfigError::WeightCount {
                        expected: n,
                        got: w.len(),
                    });
                }
                w.clone()
            }
        };
        if w.iter().any(|x| !x.is_finite() || *x < 0.0)
            || !matches!(w.first(), Some(w0) if *w0 > 0.0)
        {
            return Err(ConfigError::BadWeights);
        }
        Ok(w)
    }
}

/// When the open (not yet closed) interval enters the average (004 Sec. 3.4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OpenInterval {
    /// The thesis' rule: include it, with preshifted weights, only when that raises the ALI
    /// (lowers the loss estimate): `max(I_closed, I_open)`. INC mode while the closed average
    /// wins, DEC mode once the open interval does. Also RFC 5348 §5.4 and TFWC (spec 002 §2.2).
    #[default]
    IfLarger,
    /// Closed intervals only (Fig. 3.5's "without current interval"): never rises while
    /// losses stop. For experiments.
    Never,
    /// Always include it with preshifted weights (Fig. 3.5's "with current interval"):
    /// overestimates loss right after each event. For experiments.
    Always,
}

/// How an average over fewer than n closed intervals is formed. The thesis only says that
/// "the total number of loss intervals is used" (004 Sec. 3.4.1); with the open interval in
/// play that has two readings. Both agree once n intervals are closed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PartialHistory {
    /// The open-interval average takes the open interval and up to n − 1 closed ones, so with
    /// k < n closed it uses k + 1 weights (spec 004 §2.7's reference code). Chosen as the
    /// default because it keeps the thesis' continuity property at every history length: a
    /// loss in DEC mode leaves the estimate unchanged (the preshifted average is exactly the
    /// closed average after the shift).
    #[default]
    Grow,
    /// Both averages use the same k weights: the open interval plus the k − 1 newest closed
    /// ones (RFC 5348 §5.4's `I_tot0`; Choi's TFWC code, spec 002 §2.2, where one seeded
    /// interval gives `max(h[0], h[1])`). A loss in DEC mode then moves the estimate while
    /// k < n.
    SameWeights,
}

/// Extra deweighting of old intervals after a long loss-free stretch (004 Sec. 3.7). All but
/// [`Discounting::Rfc5348`] trigger when the open interval exceeds `m` times the closed
/// average ([`AliConfig::discount_threshold`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Discounting {
    /// Linear weights only.
    Off,
    /// Discard old intervals (Eq. 3.21, rejected by the thesis for its jumps): average the open
    /// interval with only `n' − 1` closed ones, `n' = max(n − ceil(cur/(m·avg)), 1)`.
    Discard,
    /// Loss-interval duplication (Sec. 3.7.3): once the open interval exceeds the threshold it
    /// is inserted as a closed interval (the oldest drops out) and keeps counting: "the two
    /// most recent intervals have the same size", and so "the number of packets in the loss
    /// history does no longer correspond to the actual number of received packets" (the
    /// duplicated packets count twice). The estimate jumps at a duplication ("can modify the
    /// loss estimate considerably"); the next one comes when the open interval passes `m`
    /// times the new closed average, and at least one packet after the last.
    Duplication,
    /// Proportional deweighting (Eq. 3.22–3.23): in the open-interval average the closed
    /// intervals' weights are scaled by `d = max(m·avg/cur, floor)`. `floor` is the thesis'
    /// optional `d_lim` (0.2 simulated, Sec. 3.7.4); 0 means none. `d` is computed from the
    /// undeweighted closed average, avoiding the circularity of Eq. 3.23's printed left side.
    Proportional { floor: f64 },
    /// The thesis' final choice (Sec. 3.7.4, Fig. 4.19c): proportional deweighting without a
    /// floor, and when a loss event ends a deweighted stretch (`d < 1`) every interval in the
    /// history is set to the current estimate, so the estimate is unchanged and the original
    /// weights apply again. The remodelled history holds the intervals it would have held
    /// (`min(k + 1, n)`), none invented.
    #[default]
    ProportionalRemodel,
    /// RFC 5348 §5.5 history discounting: the same `d` (the RFC's general factor `DF`,
    /// floored at `floor`, the RFC's THRESHOLD, 0.5 in ns-2's `minDiscountRatio_`) scales the
    /// closed intervals in the open-interval average, and at each loss event it is folded into
    /// per-interval factors `DF_i` that keep discounting those intervals in every later
    /// average, closed or open.
    Rfc5348 { floor: f64 },
}

/// Configuration of the ALI estimator ([`LossHistory`]). The default is the thesis' TFRC
/// (004): n = 8, Table 3.1 weights, current-interval rule, proportional deweighting with
/// history remodelling at m = 2.
#[derive(Clone, Debug, PartialEq)]
pub struct AliConfig {
    /// History size n in closed intervals: 8 for TFRC (004 Sec. 3.4.1, confirmed by Sec. 4.8)
    /// and TFWC (002 §2.2); 16 for TTFWC's smooth mode (000 Sec. 3.3).
    pub n: usize,
    /// Weights `w_0..w_{n−1}`.
    pub weights: Weights,
    /// The current-interval rule (004 Sec. 3.4.3).
    pub open_interval: OpenInterval,
    /// Averages over fewer than n intervals.
    pub partial: PartialHistory,
    /// History discounting variant (004 Sec. 3.7; RFC 5348 §5.5).
    pub discounting: Discounting,
    /// `m`: old intervals count as unrepresentative once the open interval exceeds `m` times
    /// the closed average (004 Sec. 3.7). The thesis leaves it open; 2 is ns-2's factor and
    /// RFC 5348 §5.5's "twice" (spec 004 §2.13). Must be above 1.
    pub discount_threshold: f64,
    /// The packets before the first loss event.
    pub first_run: FirstRun,
}

impl Default for AliConfig {
    fn default() -> Self {
        AliConfig {
            n: 8,                                          // 004 Sec. 3.4.1
            weights: Weights::Rfc5348,                     // 004 Table 3.1 at n = 8
            open_interval: OpenInterval::IfLarger,         // 004 Sec. 3.4.3
            partial: PartialHistory::Grow,                 // spec 004 §2.7
            discounting: Discounting::ProportionalRemodel, // 004 Sec. 3.7.4, final choice
            discount_threshold: 2.0,                       // spec 004 §2.13 (m = 2)
            first_run: FirstRun::AsInterval,
        }
    }
}

impl AliConfig {
    /// Widmer's TFRC (004), the default.
    pub fn tfrc_thesis() -> Self {
        Self::default()
    }

    /// RFC 5348 §5.4 without the optional §5.5 discounting.
    pub fn rfc5348() -> Self {
        AliConfig {
            partial: PartialHistory::SameWeights,
            discounting: Discounting::Off,
            first_run: FirstRun::Discard,
            ..Self::default()
        }
    }

    /// Choi's TFWC (002 §2.2): n = 8, TFRC weights, `max(I_tot0, I_tot1)` over the filled
    /// history, no discounting.
    pub fn tfwc() -> Self {
        AliConfig {
            partial: PartialHistory::SameWeights,
            discounting: Discounting::Off,
            ..Self::default()
        }
    }

    /// TTFWC (000 Sec. 3.3): responsive mode keeps 8 intervals with TFRC's weights, smooth
    /// mode 16 with Choi's `2/(i−1)` weights, as in Choi's code (spec 000 §2.1).
    pub fn ttfwc(smooth: bool) -> Self {
        if smooth {
            AliConfig {
                n: 16,
                weights: Weights::Choi,
                ..Self::tfwc()
            }
        } else {
            Self::tfwc()
        }
    }
}

/// Largest accepted history size; averages cost O(n) per query.
pub const MAX_HISTORY: usize = 1024;

/// A configuration that cannot produce an estimator.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ConfigError {
    /// n outside 1..=MAX_HISTORY.
    #[error("loss history size n must be in 1..={MAX_HISTORY}, got {0}")]
    HistorySize(usize),
    /// Custom weights of the wrong length.
    #[error("custom loss-interval weights: expected {expected}, got {got}")]
    WeightCount { expected: usize, got: usize },
    /// A weight that is negative, not finite, or a zero `w_0`.
    #[error("loss-interval weights must be finite and non-negative, with w_0 > 0")]
    BadWeights,
    /// A numeric parameter outside its range.
    #[error("{name} must be {expected}, got {value}")]
    OutOfRange {
        name: &'static str,
        expected: &'static str,
        value: f64,
    },
}

fn check(
    name: &'static str,
    expected: &'static str,
    value: f64,
    ok: bool,
) -> Result<(), ConfigError> {
    if ok && value.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            name,
            expected,
            value,
        })
    }
}

/// One closed interval and, for RFC 5348 §5.5 only, its accumulated discount factor `DF_i`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Closed {
    len: f64,
    df: f64,
}

/// The weighted average loss interval estimator (004 Eq. 3.6 with Secs. 3.4.3 and 3.7).
#[derive(Clone, Debug)]
pub struct LossHistory {
    cfg: AliConfig,
    w: Vec<f64>,
    /// Closed intervals, newest first, at most n.
    closed: VecDeque<Closed>,
    /// Packets in the open interval.
    open: u64,
    /// A loss event (or a seed) has happened, so `open` counts from an event start.
    started: bool,
    events: u64,
    /// `m × closed average`, cached for the per-packet duplication check.
    threshold: f64,
}

impl LossHistory {
    pub fn new(cfg: AliConfig) -> Result<Self, ConfigError> {
        if cfg.n == 0 || cfg.n > MAX_HISTORY {
            return Err(ConfigError::HistorySize(cfg.n));
        }
        let w = cfg.weights.resolve(cfg.n)?;
        let m = cfg.discount_threshold;
        check(
            "discount_threshold m",
            "a finite number above 1",
            m,
            m > 1.0,
        )?;
        match cfg.discounting {
            Discounting::Proportional { floor } | Discounting::Rfc5348 { floor } => check(
                "discount floor",
                "in [0, 1]",
                floor,
                (0.0..=1.0).contains(&floor),
            )?,
            _ => {}
        }
        Ok(LossHistory {
            closed: VecDeque::with_capacity(cfg.n),
            cfg,
            w,
            open: 0,
            started: false,
            events: 0,
            threshold: f64::INFINITY,
        })
    }

    pub fn config(&self) -> &AliConfig {
        &self.cfg
    }

    /// The resolved weights `w_0..w_{n−1}`.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// Closed intervals, newest first (after remodelling or seeding, not packet counts).
    pub fn closed_intervals(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed.iter().map(|c| c.len)
    }

    /// The average of the closed intervals alone (INC mode; `ppl_{i−1}^avg` of 004 Sec. 3.7),
    /// with RFC 5348 §5.5's per-interval discounts if that variant is on.
    pub fn closed_average(&self) -> Option<f64> {
        if self.closed.is_empty() {
            return None;
        }
        let (mut num, mut den) = (0.0, 0.0);
        for (c, w) in self.closed.iter().zip(&self.w) {
            num += w * c.df * c.len;
            den += w * c.df;
        }
        Some(num / den)
    }

    /// The deweighting factor `d` of Eq. 3.22 (RFC 5348 §5.5's `DF`) at this moment.
    pub fn deweight_factor(&self) -> f64 {
        let floor = match self.cfg.discounting {
            Discounting::Proportional { floor } | Discounting::Rfc5348 { floor } => floor,
            Discounting::ProportionalRemodel => 0.0,
            _ => return 1.0,
        };
        match self.closed_average() {
            Some(avg) => {
                let limit = self.cfg.discount_threshold * avg;
                let open = self.open as f64;
                if open > limit {
                    (limit / open).max(floor)
                } else {
                    1.0
                }
            }
            None => 1.0,
        }
    }

    /// The average including the open interval with preshifted weights (DEC mode), after
    /// deweighting or discarding. `None` without a closed interval.
    pub fn open_average(&self) -> Option<f64> {
        let avg = self.closed_average()?;
        let n = self.cfg.n;
        let k = self.closed.len();
        let open = self.open as f64;
        // How many closed intervals join the open one.
        let mut take = match self.cfg.partial {
            PartialHistory::Grow => k.min(n - 1),
            PartialHistory::SameWeights => k - 1,
        };
        let m = self.cfg.discount_threshold;
        if self.cfg.discounting == Discounting::Discard && open > m * avg {
            // Eq. 3.21: n' intervals in all, the open one included.
            let drop = (open / (m * avg)).ceil();
            let n_prime = if drop >= n as f64 {
                1
            } else {
                (n - drop as usize).max(1)
            };
            take = take.min(n_prime - 1);
        }
        let d = self.deweight_factor();
        let (mut num, mut den) = (self.w[0] * open, self.w[0]);
        for (c, w) in self.closed.iter().take(take).zip(&self.w[1..]) {
            num += w * d * c.df * c.len;
            den += w * d * c.df;
        }
        Some(num / den)
    }

    fn push_closed(&mut self, c: Closed) {
        if self.closed.len() == self.cfg.n {
            self.closed.pop_back();
        }
        self.closed.push_front(c);
    }

    fn refresh_threshold(&mut self) {
        self.threshold = match (self.cfg.discounting, self.closed_average()) {
            (Discounting::Duplication, Some(avg)) => self.cfg.discount_threshold * avg,
            _ => f64::INFINITY,
        };
    }
}

impl LossEstimator for LossHistory {
    fn on_packets(&mut self, count: u64) {
        let mut left = count;
        // Duplication (Sec. 3.7.3) fires the moment the open interval passes m × average, so a
        // bulk run is split at each crossing; every other variant just counts.
        while left > 0 && self.threshold.is_finite() {
            // Packets until open > threshold.
            let target = self.threshold.floor() + 1.0;
            let need = if (self.open as f64) >= target {
                0
            } else {
                (target - self.open as f64).min(u64::MAX as f64) as u64
            };
            if need > left {
                break;
            }
            self.open += need;
            left -= need;
            let len = self.open as f64;
            self.push_closed(Closed { len, df: 1.0 });
            self.refresh_threshold();
            // The open interval stays as it is (Sec. 3.7.3). One packet must follow before the
            // next duplication, so a run always advances even if the open interval is still
            // above the new threshold.
            if left == 0 {
                break;
            }
            self.open = self.open.saturating_add(1);
            left -= 1;
        }
        self.open = self.open.saturating_add(left);
    }

    fn on_loss_event(&mut self) {
        self.events += 1;
        let closes = if self.started {
            true
        } else {
            self.cfg.first_run == FirstRun::AsInterval && self.open > 0
        };
        if closes {
            let len = self.open as f64;
            match self.cfg.discounting {
                Discounting::ProportionalRemodel if self.deweight_factor() < 1.0 => {
                    // Sec. 3.7.4 (b): every interval becomes the current estimate.
                    let est = self.average_loss_interval().unwrap_or(len);
                    let count = (self.closed.len() + 1).min(self.cfg.n);
                    self.closed.clear();
                    self.closed
                        .extend(std::iter::repeat(Closed { len: est, df: 1.0 }).take(count));
                }
                Discounting::Rfc5348 { .. } => {
                    let df = self.deweight_factor();
                    for c in &mut self.closed {
                        c.df *= df;
                    }
                    self.push_closed(Closed { len, df: 1.0 });
                }
                _ => self.push_closed(Closed { len, df: 1.0 }),
            }
        }
        self.started = true;
        self.open = 1;
        self.refresh_threshold();
    }

    fn seed(&mut self, interval: f64) {
        if interval.is_nan() {
            return;
        }
        self.closed.clear();
        self.closed.push_front(Closed {
            len: interval.max(1.0),
            df: 1.0,
        });
        if !self.started {
            self.started = true;
            self.open = 0;
        }
        self.refresh_threshold();
    }

    fn average_loss_interval(&self) -> Option<f64> {
        let closed = self.closed_average()?;
        let ali = match self.cfg.open_interval {
            OpenInterval::Never => closed,
            OpenInterval::Always => self.open_average().unwrap_or(closed),
            OpenInterval::IfLarger => closed.max(self.open_average().unwrap_or(closed)),
        };
        Some(ali)
    }

    fn loss_events(&self) -> u64 {
        self.events
    }

    fn open_interval(&self) -> u64 {
        self.open
    }

    fn reset(&mut self) {
        self.closed.clear();
        self.open = 0;
        self.started = false;
        self.events = 0;
        self.threshold = f64::INFINITY;
    }
}

/// Configuration of the EWMA-of-intervals estimator (004 Eq. 3.5, rejected).
#[derive(Clone, Debug, PartialEq)]
pub struct EwmaConfig {
    /// γ, the weight of the newest closed interval. 0.5 is the thesis' example of a value that
    /// makes the estimate "consist almost solely of the last loss interval" (Sec. 3.4.1);
    /// ns-2's `algo_ = 2` used 0.75 (spec 004 §2.6 \[X\]). In (0, 1].
    pub gamma: f64,
    /// The current-interval rule, applied as for the ALI (`max(avg, γ·cur + (1−γ)·avg)`).
    /// The thesis says every interval-based method must handle the open interval (Sec. 3.4.3)
    /// but not how this one does; using the same rule makes comparisons (E13) about the
    /// averaging alone.
    pub open_interval: OpenInterval,
    pub first_run: FirstRun,
}

impl Default for EwmaConfig {
    fn default() -> Self {
        EwmaConfig {
            gamma: 0.5, // 004 Sec. 3.4.1, Fig. 3.2a
            open_interval: OpenInterval::IfLarger,
            first_run: FirstRun::AsInterval,
        }
    }
}

/// EWMA of loss intervals (004 Eq. 3.5): `ppl = γ·ppl_i + (1 − γ)·ppl` at each loss event,
/// starting from the first closed interval (the thesis does not say; any other start value
/// would be a made-up interval).
#[derive(Clone, Debug)]
pub struct EwmaEstimator {
    cfg: EwmaConfig,
    avg: Option<f64>,
    open: u64,
    started: bool,
    events: u64,
}

impl EwmaEstimator {
    pub fn new(cfg: EwmaConfig) -> Result<Self, ConfigError> {
        let g = cfg.gamma;
        check("EWMA gamma", "in (0, 1]", g, g > 0.0 && g <= 1.0)?;
        Ok(EwmaEstimator {
            cfg,
            avg: None,
            open: 0,
            started: false,
            events: 0,
        })
    }

    fn fold(&mut self, len: f64) {
        let g = self.cfg.gamma;
        self.avg = Some(match self.avg {
            Some(a) => g * len + (1.0 - g) * a,
            None => len,
        });
    }
}

impl LossEstimator for EwmaEstimator {
    fn on_packets(&mut self, count: u64) {
        self.open = self.open.saturating_add(count);
    }

    fn on_loss_event(&mut self) {
        self.events += 1;
        if self.started || (self.cfg.first_run == FirstRun::AsInterval && self.open > 0) {
            self.fold(self.open as f64);
        }
        self.started = true;
        self.open = 1;
    }

    fn seed(&mut self, interval: f64) {
        if interval.is_nan() {
            return;
        }
        self.avg = Some(interval.max(1.0));
        if !self.started {
            self.started = true;
            self.open = 0;
        }
    }

    fn average_loss_interval(&self) -> Option<f64> {
        let a = self.avg?;
        let g = self.cfg.gamma;
        let with_open = g * self.open as f64 + (1.0 - g) * a;
        Some(match self.cfg.open_interval {
            OpenInterval::Never => a,
            OpenInterval::Always => with_open,
            OpenInterval::IfLarger => a.max(with_open),
        })
    }

    fn loss_events(&self) -> u64 {
        self.events
    }

    fn open_interval(&self) -> u64 {
        self.open
    }

    fn reset(&mut self) {
        self.avg = None;
        self.open = 0;
        self.started = false;
        self.events = 0;
    }
}

/// Configuration of the dynamic history window (004 Eq. 3.4, rejected).
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicWindowConfig {
    /// K, the loss events a meaningful sample needs: the window is `h = K/l_exp` packets.
    /// 4 in the thesis' example, where one event entering the window moves the estimate 20 %
    /// (Sec. 3.4.1).
    pub k: f64,
    /// E, the lower bound on loss events in the window (Sec. 3.4.1, first fix): the window
    /// grows back to the E-th newest event rather than hold fewer. The thesis gives no value;
    /// 1 is the smallest that cures the defect it names (an empty window, `l_est = 0`) while
    /// leaving the window size to Eq. 3.4.
    pub min_events: u32,
    /// Memory bound: at most this many events are kept in the window; older ones are dropped
    /// and the window start moves past them (a tiny external `l_exp` could otherwise make the
    /// window, and the list, unbounded).
    pub max_events: usize,
    pub first_run: FirstRun,
}

impl Default for DynamicWindowConfig {
    fn default() -> Self {
        DynamicWindowConfig {
            k: 4.0, // 004 Sec. 3.4.1
            min_events: 1,
            max_events: 4096,
            first_run: FirstRun::AsInterval,
        }
    }
}

/// The dynamic history window (004 Eq. 3.4): loss events counted over the last
/// `h = K/l_exp` packets, `l_est = events/h`, with the thesis' two fixes: at least E events in
/// the window, and a window start that never moves back past a packet it has already excluded
/// (so a dropped event never returns). The window ends at the newest judged packet, so the
/// open interval is always part of it: the current-interval rule does not apply.
///
/// `l_exp` is the loss rate the equation gives for the current sending rate and RTT, which
/// only the protocol knows ([`LossEstimator::set_expected_loss_rate`]). Without it the window
/// uses its own latest estimate: the thesis notes `l_exp` reproduces the previous `l_act`
/// after one RTT anyway (Sec. 3.4.1, the feedback-loop defect), so this is that loop without
/// the one-RTT delay.
#[derive(Clone, Debug)]
pub struct DynamicWindow {
    cfg: DynamicWindowConfig,
    /// Index of the next packet to be judged.
    pos: i64,
    /// Window start (packet index); never decreases except on seed/reset.
    start: i64,
    /// Start positions of the loss events inside the window, oldest first (seeds may be
    /// negative).
    events: VecDeque<i64>,
    /// Start of the open interval.
    open_start: i64,
    started: bool,
    /// At least one complete interval (two event starts, real or synthetic) has been seen.
    complete: bool,
    event_count: u64,
    l_exp: Option<f64>,
}

impl DynamicWindow {
    pub fn new(cfg: DynamicWindowConfig) -> Result<Self, ConfigError> {
        check("dynamic window K", "positive", cfg.k, cfg.k > 0.0)?;
        if cfg.min_events == 0 {
            return Err(ConfigError::OutOfRange {
                name: "dynamic window E",
                expected: "at least 1",
                value: 0.0,
            });
        }
        if cfg.max_events < cfg.min_events as usize {
            return Err(ConfigError::OutOfRange {
                name: "dynamic window max_events",
                expected: "at least E",
                value: cfg.max_events as f64,
            });
        }
        Ok(DynamicWindow {
            cfg,
            pos: 0,
            start: 0,
            events: VecDeque::new(),
            open_start: 0,
            started: false,
            complete: false,
            event_count: 0,
            l_exp: None,
        })
    }

    /// The window's current size in packets.
    pub fn window_len(&self) -> u64 {
        (self.pos - self.start).max(0) as u64
    }

    fn estimate(&self) -> Option<f64> {
        if !self.complete || self.events.is_empty() {
            return None;
        }
        Some(((self.pos - self.start).max(1)) as f64 / self.events.len() as f64)
    }

    /// Move the window start forward to `pos − h`, but not past the E-th newest event and
    /// never backwards.
    fn slide(&mut self) {
        let Some(&oldest) = self.events.front() else {
            return;
        };
        let l_exp = self.l_exp.or_else(|| self.estimate().map(|ppl| 1.0 / ppl));
        let mut cand = match l_exp {
            Some(l) if l > 0.0 => {
                let h = (self.cfg.k / l).ceil();
                if h >= (self.pos - self.start) as f64 {
                    // A window reaching before the current start cannot grow back.
                    self.start
                } else {
                    self.pos - h as i64
                }
            }
            _ => self.start,
        };
        let e = self.cfg.min_events as usize;
        let bound = if self.events.len() >= e {
            self.events[self.events.len() - e]
        } else {
            oldest
        };
        cand = cand.min(bound);
        self.start = self.start.max(cand);
        while self.events.front().is_some_and(|&p| p < self.start) {
            self.events.pop_front();
        }
        while self.events.len() > self.cfg.max_events {
            self.events.pop_front();
            if let Some(&p) = self.events.front() {
                self.start = self.start.max(p);
            }
        }
    }
}

impl LossEstimator for DynamicWindow {
    fn on_packets(&mut self, count: u64) {
        self.pos = self.pos.saturating_add(count.min(i64::MAX as u64) as i64);
        self.slide();
    }

    fn on_loss_event(&mut self) {
        self.event_count += 1;
        if !self.started {
            if self.cfg.first_run == FirstRun::AsInterval && self.pos > 0 {
                // The flow start acts as the event that opened the first interval.
                self.events.push_back(0);
                self.start = 0;
                self.complete = true;
            } else {
                self.start = self.pos;
            }
        } else {
            self.complete = true;
        }
        self.started = true;
        self.events.push_back(self.pos);
        self.open_start = self.pos;
        self.pos = self.pos.saturating_add(1);
        self.slide();
    }

    fn seed(&mut self, interval: f64) {
        if interval.is_nan() {
            return;
        }
        let len = interval.clamp(1.0, (i64::MAX / 4) as f64).round() as i64;
        if !self.started {
            self.open_start = self.pos;
            self.started = true;
        }
        let synthetic = self.open_start.saturating_sub(len);
        self.events.clear();
        self.events.push_back(synthetic);
        self.events.push_back(self.open_start);
        self.start = synthetic;
        self.complete = true;
    }

    fn set_expected_loss_rate(&mut self, l_exp: Option<f64>) {
        self.l_exp = l_exp.filter(|l| l.is_finite() && *l > 0.0);
    }

    fn average_loss_interval(&self) -> Option<f64> {
        self.estimate()
    }

    fn loss_events(&self) -> u64 {
        self.event_count
    }

    fn open_interval(&self) -> u64 {
        (self.pos - self.open_start).max(0) as u64
    }

    fn reset(&mut self) {
        let cfg = self.cfg.clone();
        *self = DynamicWindow {
            cfg,
            pos: 0,
            start: 0,
            events: VecDeque::new(),
            open_start: 0,
            started: false,
            complete: false,
            event_count: 0,
            l_exp: None,
        };
    }
}

/// Which estimator to build: what a protocol `Config` or a scenario names.
#[derive(Clone, Debug, PartialEq)]
pub enum EstimatorConfig {
    Ali(AliConfig),
    DynamicWindow(DynamicWindowConfig),
    Ewma(EwmaConfig),
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig::Ali(AliConfig::default())
    }
}

impl EstimatorConfig {
    pub fn build(&self) -> Result<AnyEstimator, ConfigError> {
        Ok(match self {
            EstimatorConfig::Ali(c) => AnyEstimator::Ali(LossHistory::new(c.clone())?),
            EstimatorConfig::DynamicWindow(c) => {
                AnyEstimator::DynamicWindow(DynamicWindow::new(c.clone())?)
            }
            EstimatorConfig::Ewma(c) => AnyEstimator::Ewma(EwmaEstimator::new(c.clone())?),
        })
    }
}

/// Any of the estimators, dispatched by `match` (no trait object on the hot path).
#[derive(Clone, Debug)]
pub enum AnyEstimator {
    Ali(LossHistory),
    DynamicWindow(DynamicWindow),
    Ewma(EwmaEstimator),
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $body:expr) => {
        match $self {
            AnyEstimator::Ali($e) => $body,
            AnyEstimator::DynamicWindow($e) => $body,
            AnyEstimator::Ewma($e) => $body,
        }
    };
}

impl LossEstimator for AnyEstimator {
    fn on_packets(&mut self, count: u64) {
        dispatch!(self, e => e.on_packets(count))
    }
    fn on_loss_event(&mut self) {
        dispatch!(self, e => e.on_loss_event())
    }
    fn seed(&mut self, interval: f64) {
        dispatch!(self, e => e.seed(interval))
    }
    fn set_expected_loss_rate(&mut self, l_exp: Option<f64>) {
        dispatch!(self, e => e.set_expected_loss_rate(l_exp))
    }
    fn average_loss_interval(&self) -> Option<f64> {
        dispatch!(self, e => e.average_loss_interval())
    }
    fn loss_events(&self) -> u64 {
        dispatch!(self, e => e.loss_events())
    }
    fn open_interval(&self) -> u64 {
        dispatch!(self, e => e.open_interval())
    }
    fn reset(&mut self) {
        dispatch!(self, e => e.reset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// A history with the given closed intervals (oldest first) and an open interval of
    /// `open` packets, built only through the public feeding API.
    fn feed<E: LossEstimator>(e: &mut E, closed_oldest_first: &[u64], open: u64) {
        e.on_loss_event();
        for &len in closed_oldest_first {
            e.on_packets(len - 1);
            e.on_loss_event();
        }
        e.on_packets(open - 1);
    }

    fn ali(cfg: AliConfig, closed: &[u64], open: u64) -> LossHistory {
        let mut h = LossHistory::new(cfg).unwrap();
        feed(&mut h, closed, open);
        h
    }

    fn off() -> AliConfig {
        AliConfig {
            discounting: Discounting::Off,
            ..AliConfig::default()
        }
    }

    /// xorshift64*: a self-contained, seeded PRNG so the random-loss tests are reproducible.
    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Packet `i` of a stream that loses one packet in `every`, starting with the first: a
    /// new loss event, or received.
    fn periodic_outcome(i: u64, every: u64) -> PacketOutcome {
        if i % every == 0 {
            PacketOutcome::NewLossEvent
        } else {
            PacketOutcome::Received
        }
    }

    fn periodic<E: LossEstimator>(e: &mut E, every: u64, packets: u64) {
        for i in 0..packets {
            e.on_packet(periodic_outcome(i, every));
        }
    }

    #[test]
    fn rfc_rule_gives_table_3_1_weights_at_n8() {
        let w = Weights::Rfc5348.resolve(8).unwrap();
        let want = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        assert!(w.iter().zip(want).all(|(a, b)| close(*a, b)), "{w:?}");
        assert!(close(w.iter().sum(), 6.0));
    }

    #[test]
    fn sixteen_interval_weights_for_both_rules() {
        let rfc = Weights::Rfc5348.resolve(16).unwrap();
        assert!(rfc[..8].iter().all(|&x| x == 1.0));
        for (i, x) in rfc[8..].iter().enumerate() {
            assert!(close(*x, 1.0 - (i as f64 + 1.0) / 9.0), "w_{} = {x}", i + 8);
        }
        assert!(close(rfc[15], 1.0 / 9.0));
        let choi = Weights::Choi.resolve(16).unwrap();
        let want = [
            1.0, 1.0, 1.0, 1.0, 0.667, 0.5, 0.4, 0.333, 0.286, 0.25, 0.222, 0.2, 0.182, 0.167,
            0.154, 0.143,
        ];
        assert!(
            choi.iter().zip(want).all(|(a, b)| (a - b).abs() < 5e-4),
            "{choi:?}"
        );
        // Spec 000 §2.1: Σw = 7.503.
        assert!((choi.iter().sum::<f64>() - 7.503).abs() < 5e-4);
        assert_eq!(AliConfig::ttfwc(true).n, 16);
        assert_eq!(
            LossHistory::new(AliConfig::ttfwc(true)).unwrap().weights(),
            &choi[..]
        );
    }

    #[test]
    fn open_interval_below_average_leaves_the_estimate_at_the_closed_average() {
        // Spec 004 §2.7: hist = [100]*8, cur = 50 → INC, ALI 100 (B would be 91.7).
        let h = ali(AliConfig::default(), &[100; 8], 50);
        assert!(close(h.open_average().unwrap(), 550.0 / 6.0));
        assert!(close(h.average_loss_interval().unwrap(), 100.0));
        assert!(close(h.loss_event_rate().unwrap(), 0.01));
    }

    #[test]
    fn open_interval_above_average_raises_the_estimate_with_preshifted_weights() {
        // Spec 004 §2.7: cur = 150 → DEC, ALI = (150 + 5·100)/6 = 108.33.
        for cfg in [AliConfig::default(), off(), AliConfig::tfwc()] {
            let h = ali(cfg, &[100; 8], 150);
            assert!(close(h.average_loss_interval().unwrap(), 650.0 / 6.0));
        }
    }

    #[test]
    fn current_interval_rule_switches_off() {
        let never = AliConfig {
            open_interval: OpenInterval::Never,
            ..off()
        };
        assert!(close(
            ali(never, &[100; 8], 150).average_loss_interval().unwrap(),
            100.0
        ));
        let always = AliConfig {
            open_interval: OpenInterval::Always,
            ..off()
        };
        let h = ali(always, &[100; 8], 50);
        assert!(close(h.average_loss_interval().unwrap(), 550.0 / 6.0));
    }

    #[test]
    fn loss_in_dec_mode_leaves_the_estimate_unchanged() {
        // Full history, and (with the default Grow convention) a partial one.
        for closed in [&[100u64; 8][..], &[100, 60, 140][..]] {
            let mut h = ali(off(), closed, 180);
            let before = h.average_loss_interval().unwrap();
            assert!(before > h.closed_average().unwrap(), "must be in DEC mode");
            h.on_loss_event();
            assert!(close(h.average_loss_interval().unwrap(), before));
        }
        // RFC 5348's same-weights convention keeps it only once the history is full.
        let mut h = ali(AliConfig::tfwc(), &[100; 8], 180);
        let before = h.average_loss_interval().unwrap();
        h.on_loss_event();
        assert!(close(h.average_loss_interval().unwrap(), before));
    }

    #[test]
    fn loss_in_inc_mode_raises_the_loss_estimate() {
        let mut h = ali(off(), &[100; 8], 40);
        h.on_loss_event();
        // The 40-packet interval enters with w_0: (40 + 5·100 + ...)/6 with 100s → 90.
        assert!(close(h.average_loss_interval().unwrap(), 540.0 / 6.0));
    }

    #[test]
    fn fewer_than_n_intervals_are_normalised_by_the_weights_used() {
        let h = ali(off(), &[50, 100], 10);
        assert!(close(h.closed_average().unwrap(), 75.0));
        assert!(close(h.average_loss_interval().unwrap(), 75.0));
        // Grow: the open average has three weights; SameWeights: two.
        let grow = ali(off(), &[50, 100], 200);
        assert!(close(grow.average_loss_interval().unwrap(), 350.0 / 3.0));
        let same = ali(AliConfig::tfwc(), &[50, 100], 200);
        assert!(close(same.average_loss_interval().unwrap(), 150.0));
    }

    #[test]
    fn proportional_deweighting_matches_the_worked_example() {
        // Spec 004 §2.13: hist = [100]*8, cur = 400, m = 2 → d = 0.5, ALI 185.7; 150 without.
        for d in [
            Discounting::Proportional { floor: 0.0 },
            Discounting::ProportionalRemodel,
        ] {
            let cfg = AliConfig {
                discounting: d,
                ..AliConfig::default()
            };
            let h = ali(cfg, &[100; 8], 400);
            assert!(close(h.deweight_factor(), 0.5));
            assert!(close(h.average_loss_interval().unwrap(), 650.0 / 3.5));
            assert!((h.average_loss_interval().unwrap() - 185.7).abs() < 0.05);
        }
        assert!(close(
            ali(off(), &[100; 8], 400).average_loss_interval().unwrap(),
            150.0
        ));
    }

    #[test]
    fn deweighting_floor_limits_the_factor() {
        let cfg = AliConfig {
            discounting: Discounting::Proportional { floor: 0.2 },
            ..AliConfig::default()
        };
        let h = ali(cfg, &[100; 8], 2000);
        assert!(close(h.deweight_factor(), 0.2));
        assert!(close(h.average_loss_interval().unwrap(), 2100.0 / 2.0));
    }

    #[test]
    fn remodelling_keeps_the_estimate_at_the_next_loss() {
        let mut h = ali(AliConfig::default(), &[100; 8], 400);
        let before = h.average_loss_interval().unwrap();
        h.on_loss_event();
        assert!(close(h.average_loss_interval().unwrap(), before));
        assert!(h.closed_intervals().all(|x| close(x, before)));
        assert_eq!(h.closed_intervals().count(), 8);
        assert!(close(h.deweight_factor(), 1.0));
        // Without remodelling the deweighting just stops and the estimate jumps back to 150.
        let cfg = AliConfig {
            discounting: Discounting::Proportional { floor: 0.0 },
            ..AliConfig::default()
        };
        let mut p = ali(cfg, &[100; 8], 400);
        p.on_loss_event();
        assert!(close(p.average_loss_interval().unwrap(), 150.0));
    }

    #[test]
    fn duplication_inserts_the_open_interval_continuously() {
        let cfg = AliConfig {
            discounting: Discounting::Duplication,
            ..AliConfig::default()
        };
        let mut h = ali(cfg, &[100; 8], 200);
        assert!(close(h.average_loss_interval().unwrap(), 700.0 / 6.0));
        assert_eq!(h.open_interval(), 200);
        h.on_packets(1); // 201 > m·100: duplicate, and the open interval keeps its 201
        assert_eq!(h.open_interval(), 201);
        assert_eq!(h.closed_intervals().next(), Some(201.0));
        assert!(close(h.closed_average().unwrap(), 701.0 / 6.0));
        // The open interval (w0) and its copy (w1), the rest preshifted: (402 + 400)/6.
        assert!(close(h.average_loss_interval().unwrap(), 802.0 / 6.0));
        // The next threshold is m × 701/6 = 233.7: 33 more packets reach 234.
        h.on_packets(33);
        assert_eq!(
            h.closed_intervals().take(3).collect::<Vec<_>>(),
            [234.0, 201.0, 100.0]
        );
        assert_eq!(h.open_interval(), 234);
        // Every packet is counted in the open interval whatever the duplications.
        h.on_packets(300);
        assert_eq!(h.open_interval(), 534);
    }

    #[test]
    fn discarding_old_intervals_follows_eq_3_21() {
        let cfg = AliConfig {
            discounting: Discounting::Discard,
            ..AliConfig::default()
        };
        // cur = 201 > 2·100: n' = 8 − ceil(201/200) = 6, so five closed intervals join.
        let h = ali(cfg.clone(), &[100; 8], 201);
        assert!(close(h.average_loss_interval().unwrap(), 641.0 / 5.4));
        // Far beyond the threshold only the open interval is left (n' = 1).
        let h = ali(cfg, &[100; 8], 5000);
        assert!(close(h.average_loss_interval().unwrap(), 5000.0));
    }

    #[test]
    fn rfc5348_discounting_carries_factors_into_the_history() {
        let cfg = AliConfig {
            discounting: Discounting::Rfc5348 { floor: 0.5 },
            ..AliConfig::default()
        };
        let mut h = ali(cfg.clone(), &[100; 8], 400);
        assert!(close(h.average_loss_interval().unwrap(), 650.0 / 3.5));
        h.on_loss_event();
        // DF_i = 0.5 on the seven old intervals, 1 on the new one: estimate unchanged.
        assert!(close(h.closed_average().unwrap(), 650.0 / 3.5));
        // The 0.5 floor: cur = 2000 gives DF = max(0.1, 0.5).
        let h = ali(cfg, &[100; 8], 2000);
        assert!(close(h.deweight_factor(), 0.5));
        assert!(close(h.average_loss_interval().unwrap(), 2250.0 / 3.5));
    }

    #[test]
    fn periodic_loss_gives_a_constant_estimate_equal_to_the_period() {
        // 002 App. A: drop the first of every 100, 20, 10 packets → ALI 100, 20, 10; 004
        // Sec. 3.4.2: the estimate then stays constant between losses.
        for cfg in [
            AliConfig::default(),
            off(),
            AliConfig::tfwc(),
            AliConfig::rfc5348(),
        ] {
            for every in [100u64, 20, 10] {
                let mut h = LossHistory::new(cfg.clone()).unwrap();
                periodic(&mut h, every, every * 20);
                for i in 0..every * 5 {
                    assert!(
                        close(h.average_loss_interval().unwrap(), every as f64),
                        "{i}"
                    );
                    h.on_packet(periodic_outcome(i, every));
                }
            }
        }
    }

    #[test]
    fn two_back_to_back_losses_in_one_event_count_as_one_interval() {
        let mut h = LossHistory::new(AliConfig::tfwc()).unwrap();
        for _ in 0..30 {
            h.on_packet(PacketOutcome::NewLossEvent);
            h.on_packet(PacketOutcome::Lost);
            h.on_packets(98);
        }
        assert!(close(h.average_loss_interval().unwrap(), 100.0));
        assert_eq!(h.loss_events(), 30);
    }

    #[test]
    fn every_other_packet_lost_gives_two() {
        for cfg in [AliConfig::default(), AliConfig::tfwc()] {
            let mut h = LossHistory::new(cfg).unwrap();
            periodic(&mut h, 2, 100);
            assert!(close(h.average_loss_interval().unwrap(), 2.0));
        }
    }

    #[test]
    fn random_loss_converges_to_the_inverse_loss_rate() {
        // 002 App. A: random 1/5/10 % loss → ALI near 100/20/10. Two checks:
        // (a) the closed-interval average sampled at each loss event is an unbiased estimate
        //     of the mean interval 1/p. Its relative standard error over 1e6 packets is about
        //     0.38/sqrt(events/4) ≤ 0.6 % (weights' CV 0.38, autocorrelation over ~4 events),
        //     so ±3 % is five standard errors.
        // (b) the estimator's own output, averaged per packet, sits above 1/p by design (the
        //     current-interval rule only ever raises the ALI, and deweighting raises it
        //     further after long intervals); measured +11…13 % with these seeds, bounded here
        //     by [−3 %, +15 %].
        for (p, seed) in [(0.01, 1u64), (0.05, 2), (0.1, 3)] {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
            let mut plain = LossHistory::new(off()).unwrap();
            let mut thesis = LossHistory::new(AliConfig::default()).unwrap();
            let (mut at_events, mut events, mut per_packet, mut packets) = (0.0, 0u64, 0.0, 0u64);
            for i in 0..1_000_000u64 {
                let o = if rng.uniform() < p {
                    PacketOutcome::NewLossEvent
                } else {
                    PacketOutcome::Received
                };
                plain.on_packet(o);
                thesis.on_packet(o);
                if i < 50_000 {
                    continue;
                }
                if o == PacketOutcome::NewLossEvent {
                    at_events += plain.closed_average().unwrap();
                    events += 1;
                }
                per_packet += thesis.average_loss_interval().unwrap();
                packets += 1;
            }
            let target = 1.0 / p;
            let unbiased = at_events / events as f64;
            assert!((unbiased / target - 1.0).abs() < 0.03, "p={p}: {unbiased}");
            let output = per_packet / packets as f64;
            assert!(
                output / target > 0.97 && output / target < 1.15,
                "p={p}: {output}"
            );
        }
    }

    #[test]
    fn first_run_policy_decides_the_first_interval() {
        let mut h = LossHistory::new(AliConfig::default()).unwrap();
        assert_eq!(h.loss_event_rate(), None);
        h.on_packets(30);
        assert_eq!(h.average_loss_interval(), None);
        h.on_loss_event();
        assert!(close(h.average_loss_interval().unwrap(), 30.0));

        let mut d = LossHistory::new(AliConfig::rfc5348()).unwrap();
        d.on_packets(30);
        d.on_loss_event();
        assert_eq!(d.average_loss_interval(), None);
        d.on_packets(9);
        d.on_loss_event();
        assert!(close(d.average_loss_interval().unwrap(), 10.0));
    }

    #[test]
    fn seeding_replaces_the_history_and_keeps_the_open_interval() {
        // TFWC (002 Alg. 2): on the first loss, seed the pseudo interval; with one interval
        // the ALI is max(h[0], h[1]) (spec 002 §2.7).
        let mut h = LossHistory::new(AliConfig::tfwc()).unwrap();
        h.on_packets(500);
        h.on_loss_event();
        h.seed(82.1);
        assert!(close(h.average_loss_interval().unwrap(), 82.1));
        h.on_packets(99);
        assert!(close(h.average_loss_interval().unwrap(), 100.0));
        // TFRC seeds before reporting; a seed before any event restarts the count.
        let mut t = LossHistory::new(AliConfig::default()).unwrap();
        t.on_packets(1000);
        t.seed(299.0);
        assert_eq!(t.open_interval(), 0);
        assert!(close(t.average_loss_interval().unwrap(), 299.0));
        assert_eq!(t.loss_events(), 0);
        t.seed(f64::NAN);
        t.seed(0.0);
        assert!(close(t.average_loss_interval().unwrap(), 1.0));
    }

    #[test]
    fn bad_configs_are_rejected() {
        let bad = |cfg: AliConfig| LossHistory::new(cfg).unwrap_err();
        assert_eq!(
            bad(AliConfig {
                n: 0,
                ..AliConfig::default()
            }),
            ConfigError::HistorySize(0)
        );
        assert_eq!(
            bad(AliConfig {
                weights: Weights::Custom(vec![1.0; 3]),
                ..AliConfig::default()
            }),
            ConfigError::WeightCount {
                expected: 8,
                got: 3
            }
        );
        let mut w = vec![1.0; 8];
        w[0] = 0.0;
        assert_eq!(
            bad(AliConfig {
                weights: Weights::Custom(w),
                ..AliConfig::default()
            }),
            ConfigError::BadWeights
        );
        assert!(matches!(
            bad(AliConfig {
                discount_threshold: 1.0,
                ..AliConfig::default()
            }),
            ConfigError::OutOfRange { .. }
        ));
        assert!(EwmaEstimator::new(EwmaConfig {
            gamma: 0.0,
            ..EwmaConfig::default()
        })
        .is_err());
        assert!(DynamicWindow::new(DynamicWindowConfig {
            min_events: 0,
            ..DynamicWindowConfig::default()
        })
        .is_err());
    }

    #[test]
    fn ewma_follows_eq_3_5() {
        let mut e = EwmaEstimator::new(EwmaConfig::default()).unwrap();
        feed(&mut e, &[100, 100, 20], 1);
        // 100 → 100 → 0.5·20 + 0.5·100 = 60.
        assert!(close(e.average_loss_interval().unwrap(), 60.0));
        e.on_packets(99); // open = 100: 0.5·100 + 0.5·60 = 80 > 60
        assert!(close(e.average_loss_interval().unwrap(), 80.0));
        let mut p = EwmaEstimator::new(EwmaConfig::default()).unwrap();
        periodic(&mut p, 10, 1000);
        assert!(close(p.average_loss_interval().unwrap(), 10.0));
    }

    #[test]
    fn dynamic_window_jumps_by_a_fifth_under_periodic_loss() {
        // 004 Sec. 3.4.1: with K = 4 one event entering or leaving the window moves the
        // estimate by about 20 %, so even perfectly periodic loss does not give a constant.
        let mut w = DynamicWindow::new(DynamicWindowConfig::default()).unwrap();
        periodic(&mut w, 100, 4000);
        let (mut lo, mut hi) = (f64::MAX, 0.0f64);
        for i in 0..1000u64 {
            w.on_packet(periodic_outcome(i, 100));
            let x = w.average_loss_interval().unwrap();
            lo = lo.min(x);
            hi = hi.max(x);
        }
        assert!(lo >= 100.0 && hi <= 125.0 + 1e-9, "{lo}..{hi}");
        assert!(hi - lo >= 20.0, "{lo}..{hi}");
    }

    #[test]
    fn dynamic_window_never_empties_and_never_moves_back() {
        let mut w = DynamicWindow::new(DynamicWindowConfig::default()).unwrap();
        periodic(&mut w, 50, 1000);
        // Losses stop: the E = 1 bound keeps an event in the window, so the estimate grows.
        let before = w.average_loss_interval().unwrap();
        w.on_packets(10_000);
        assert!(w.average_loss_interval().unwrap() > before);
        // A small expected loss asks for a huge window, but excluded packets stay excluded:
        // the window grows only with new packets.
        w.set_expected_loss_rate(Some(0.5)); // h = 8 packets, bounded by E
        w.on_packets(1);
        let len = w.window_len();
        w.set_expected_loss_rate(Some(1e-9));
        w.on_packets(1);
        assert_eq!(w.window_len(), len + 1);
    }

    #[test]
    fn any_estimator_dispatches_to_the_configured_one() {
        for cfg in [
            EstimatorConfig::default(),
            EstimatorConfig::Ewma(EwmaConfig::default()),
            EstimatorConfig::DynamicWindow(DynamicWindowConfig::default()),
        ] {
            let mut e = cfg.build().unwrap();
            assert_eq!(e.average_loss_interval(), None);
            periodic(&mut e, 10, 400);
            let ali = e.average_loss_interval().unwrap();
            assert!((10.0..=12.5).contains(&ali), "{cfg:?}: {ali}");
            e.reset();
            assert_eq!(e.average_loss_interval(), None);
            assert_eq!(e.loss_events(), 0);
        }
    }

    /// A feeding step for the property tests: a run of packets, or a new loss event.
    fn steps() -> impl Strategy<Value = Vec<Option<u64>>> {
        prop::collection::vec(prop_oneof![(1u64..400).prop_map(Some), Just(None)], 1..120)
    }

    fn configs() -> impl Strategy<Value = AliConfig> {
        let disc = prop_oneof![
            Just(Discounting::Off),
            Just(Discounting::Discard),
            Just(Discounting::Duplication),
            (0.0..1.0f64).prop_map(|floor| Discounting::Proportional { floor }),
            Just(Discounting::ProportionalRemodel),
            (0.0..1.0f64).prop_map(|floor| Discounting::Rfc5348 { floor }),
        ];
        (
            1usize..20,
            any::<bool>(),
            any::<bool>(),
            disc,
            1.01..4.0f64,
            any::<bool>(),
        )
            .prop_map(|(n, choi, grow, discounting, m, run)| AliConfig {
                n,
                weights: if choi {
                    Weights::Choi
                } else {
                    Weights::Rfc5348
                },
                open_interval: OpenInterval::IfLarger,
                partial: if grow {
                    PartialHistory::Grow
                } else {
                    PartialHistory::SameWeights
                },
                discounting,
                discount_threshold: m,
                first_run: if run {
                    FirstRun::AsInterval
                } else {
                    FirstRun::Discard
                },
            })
    }

    fn apply<E: LossEstimator>(e: &mut E, steps: &[Option<u64>]) {
        for s in steps {
            match s {
                Some(n) => e.on_packets(*n),
                None => e.on_loss_event(),
            }
        }
    }

    proptest! {
        #[test]
        fn ali_is_positive_and_bounded_by_the_longest_interval(cfg in configs(), s in steps()) {
            let mut h = LossHistory::new(cfg).unwrap();
            for step in &s {
                apply(&mut h, std::slice::from_ref(step));
                if let Some(ali) = h.average_loss_interval() {
                    let longest = h
                        .closed_intervals()
                        .fold(h.open_interval() as f64, f64::max);
                    prop_assert!(ali > 0.0);
                    prop_assert!(ali <= longest * (1.0 + 1e-12), "{} > {}", ali, longest);
                }
            }
        }

        #[test]
        fn current_interval_rule_never_lowers_the_ali(cfg in configs(), s in steps()) {
            let mut h = LossHistory::new(cfg.clone()).unwrap();
            let never_cfg = AliConfig {
                open_interval: OpenInterval::Never,
                discounting: Discounting::Off,
                ..cfg.clone()
            };
            let plain_cfg = AliConfig { discounting: Discounting::Off, ..cfg };
            let mut never = LossHistory::new(never_cfg).unwrap();
            let mut plain = LossHistory::new(plain_cfg).unwrap();
            for step in &s {
                for e in [&mut h, &mut never, &mut plain] {
                    apply(e, std::slice::from_ref(step));
                }
                if let Some(ali) = h.average_loss_interval() {
                    prop_assert!(ali >= h.closed_average().unwrap());
                    prop_assert!(
                        plain.average_loss_interval().unwrap()
                            >= never.average_loss_interval().unwrap()
                    );
                }
            }
        }

        #[test]
        fn same_sequence_gives_identical_results(cfg in configs(), s in steps()) {
            let mut a = EstimatorConfig::Ali(cfg.clone()).build().unwrap();
            let mut b = EstimatorConfig::Ali(cfg).build().unwrap();
            apply(&mut a, &s);
            apply(&mut b, &s);
            prop_assert_eq!(
                a.average_loss_interval().map(f64::to_bits),
                b.average_loss_interval().map(f64::to_bits)
            );
            a.reset();
            apply(&mut a, &s);
            prop_assert_eq!(
                a.average_loss_interval().map(f64::to_bits),
                b.average_loss_interval().map(f64::to_bits)
            );
            for cfg in [
                EstimatorConfig::Ewma(EwmaConfig::default()),
                EstimatorConfig::DynamicWindow(DynamicWindowConfig::default()),
            ] {
                let mut x = cfg.build().unwrap();
                let mut y = cfg.build().unwrap();
                apply(&mut x, &s);
                apply(&mut y, &s);
                prop_assert_eq!(
                    x.average_loss_interval().map(f64::to_bits),
                    y.average_loss_interval().map(f64::to_bits)
                );
            }
        }
    }
}
