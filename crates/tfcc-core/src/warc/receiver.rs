//! The receiver of the receiver-driven rate schemes: loss detection and grouping (the shared
//! [`crate::loss_events`]), rounds of one RTT, and a report of the estimator's rate at the end
//! of each round (003 Sec. 3.2.1: "the receiver averages the latest s CWNDs to get the new
//! transmission rate and reports the rate to the sender, where the averaging and reporting are
//! repeated per RTT"). The estimator ([`RoundEstimator`]) is WARC's [`super::Warc`], TEAR's or
//! TFRCP's.
//!
//! Rounds are timed with the SRTT the sender carries in each data packet, and they tick whether
//! or not a packet arrived in them: the thesis' time unit is the RTT (Sec. 3.2.1, "the real
//! time t is separated by RTT into multiple rounds"), and a fluid timeout of `u` rounds must end
//! after `u` RTTs even when the rate is below one packet per RTT (pausing the rounds instead
//! deadlocks: the small windows of the timeout phase keep the rate low, so the phase never
//! counts down). Rounds stop once nothing has arrived for `idle_limit` (the sender has
//! stopped), and restart with the next arrival. Before the sender has an RTT sample (header
//! RTT 0) each arrival is answered at once so that it gets one.

use super::wire::FeedbackHeader;
use crate::endpoint::{Endpoint, Receiver, Stats};
use crate::loss_events::{DetectorConfig, Judgement, LossDetector, LossEventGrouper};
use crate::loss_history::PacketOutcome;
use crate::packet::{Header, Packet};
use crate::time::{Dur, Time};

/// What a receiver-side rate estimator is told. Rates are packets per RTT.
pub trait RoundEstimator {
    /// A packet arrived (in sequence order, after loss judgement).
    fn on_received(&mut self) {}
    /// A packet was judged lost.
    fn on_lost(&mut self) {}
    /// A loss event (losses within one RTT are one event). `u = ⌈RTO/RTT⌉ ≥ 1`.
    fn on_loss_event(&mut self, u: u32);
    /// The end of a round at `now`; returns the rate to report.
    fn on_round(&mut self, now: Time, rtt: Dur, rto: Dur) -> f64;
    /// The rate to report before any round has ended.
    fn current(&self) -> f64;
    /// Fills the estimator's part of the receiver's stats.
    fn fill_stats(&self, s: &mut Stats);
}

impl RoundEstimator for super::Warc {
    fn on_received(&mut self) {
        self.on_packet_received();
    }
    fn on_loss_event(&mut self, u: u32) {
        super::Warc::on_loss_event(self, u);
    }
    fn on_round(&mut self, _now: Time, _rtt: Dur, _rto: Dur) -> f64 {
        super::Warc::on_round(self)
    }
    fn current(&self) -> f64 {
        self.rate()
    }
    fn fill_stats(&self, s: &mut Stats) {
        s.cwnd = Some(self.window());
        s.loss_events = self.loss_events();
        s.timeouts = self.timeouts();
        s.mode = if self.in_timeout() {
            "fluid-timeout"
        } else {
            "normal"
        };
    }
}

/// A receiver running estimator `E`.
#[derive(Clone, Debug)]
pub struct RoundReceiver<E> {
    est: E,
    feedback_size: u32,
    detector: LossDetector,
    grouper: LossEventGrouper,
    rtt: Dur,
    rto: Dur,
    /// `sent_at` and arrival time of the newest data packet.
    latest: Option<(Time, Time)>,
    round_end: Option<Time>,
    last_arrival: Time,
    idle_limit: Dur,
    pending: Option<FeedbackHeader>,
    delivered: u64,
    received: u64,
    lost: u64,
    last_report: f64,
    malformed: u64,
}

impl<E: RoundEstimator> RoundReceiver<E> {
    /// Bytes of every report on the wire (a scenario check asks whether a byte-limited queue
    /// on the way back can admit one).
    pub fn feedback_size(&self) -> u32 {
        self.feedback_size
    }

    /// `idle_limit`: stop the rounds after this long without an arrival; it should exceed the
    /// sender's longest gap between packets ([`super::RateSenderConfig::max_interval`]).
    pub fn new(est: E, feedback_size: u32, idle_limit: Dur) -> Self {
        RoundReceiver {
            last_report: est.current(),
            est,
            feedback_size: feedback_size.max(1),
            detector: LossDetector::new(DetectorConfig::default()),
            grouper: LossEventGrouper::new(),
            rtt: Dur::ZERO,
            rto: Dur::ZERO,
            latest: None,
            round_end: None,
            last_arrival: Time::ZERO,
            idle_limit,
            pending: None,
            delivered: 0,
            received: 0,
            lost: 0,
            malformed: 0,
        }
    }

    pub fn estimator(&self) -> &E {
        &self.est
    }

    /// `u = ⌈RTO/RTT⌉`, at least 1 (003 Sec. 3.2.2.3).
    fn timeout_rounds(&self) -> u32 {
        if self.rtt.is_zero() {
            return 1;
        }
        let u = self.rto.as_nanos().div_ceil(self.rtt.as_nanos());
        u32::try_from(u).unwrap_or(u32::MAX).max(1)
    }

    fn report(&mut self, now: Time, rate: f64) {
        self.last_report = rate;
        if let Some((sent_at, arrived)) = self.latest {
            self.pending = Some(FeedbackHeader {
                echo: sent_at,
                hold: now.saturating_since(arrived),
                rate: if rate.is_finite() { rate.max(0.0) } else { 0.0 },
            });
        }
    }

    fn on_data(&mut self, now: Time, size: u32, d: &super::wire::DataHeader) {
        self.delivered += u64::from(size);
        if !d.rtt.is_zero() {
            self.rtt = d.rtt;
        }
        self.rto = d.rto;
        if self.latest.map_or(true, |(s, _)| d.sent_at >= s) {
            self.latest = Some((d.sent_at, now));
        }
        self.detector.on_arrival(d.seq, d.sent_at);
        let u = self.timeout_rounds();
        while let Some(j) = self.detector.poll() {
            let outcome = match j {
                Judgement::Received { sent_at, .. } => {
                    self.received += 1;
                    self.est.on_received();
                    self.grouper.classify(sent_at, false, self.rtt)
                }
                Judgement::Lost { sent_at, .. } => {
                    self.lost += 1;
                    self.est.on_lost();
                    self.grouper.classify(sent_at, true, self.rtt)
                }
                Judgement::LostRun { sent_at, .. } => {
                    self.lost += 1;
                    self.est.on_lost();
                    self.grouper.force_new_event(sent_at)
                }
            };
            if outcome == PacketOutcome::NewLossEvent {
                self.est.on_loss_event(u);
            }
        }
        self.last_arrival = now;
        if self.rtt.is_zero() {
            let r = self.est.current();
            self.report(now, r);
        } else if self.round_end.is_none() {
            self.round_end = Some(now.saturating_add(self.rtt));
        }
    }
}

impl<E: RoundEstimator> Endpoint for RoundReceiver<E> {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        match pkt.header {
            Header::WarcData(d) => self.on_data(now, pkt.size, &d),
            _ => self.malformed += 1,
        }
    }

    fn on_timeout(&mut self, now: Time) {
        let Some(end) = self.round_end else { return };
        if now < end {
            return;
        }
        if now.saturating_since(self.last_arrival) > self.idle_limit {
            self.round_end = None;
            return;
        }
        let rate = self.est.on_round(now, self.rtt, self.rto);
        self.report(now, rate);
        self.round_end = Some(now.saturating_add(self.rtt.max(Dur(1))));
    }

    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        self.pending.take().map(|f| Packet {
            size: self.feedback_size,
            header: Header::WarcFeedback(f),
        })
    }

    fn next_timeout(&self) -> Option<Time> {
        self.round_end
    }

    fn stats(&self) -> Stats {
        let mut s = Stats::default();
        self.est.fill_stats(&mut s);
        s.rtt = (!self.rtt.is_zero()).then_some(self.rtt);
        s.packets_judged = self.detector.stats().judged;
        let seen = self.received + self.lost;
        if seen > 0 {
            s.p = Some(self.lost as f64 / seen as f64);
        }
        s
    }
}

impl<E: RoundEstimator> Receiver for RoundReceiver<E> {
    fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}

/// WARC's receiver (003 Ch. 3).
pub type WarcReceiver = RoundReceiver<super::Warc>;

impl WarcReceiver {
    /// A WARC receiver with this estimator configuration.
    pub fn warc(cfg: super::WarcConfig, feedback_size: u32) -> Self {
        RoundReceiver::new(super::Warc::new(cfg), feedback_size, Dur::from_secs(128))
    }
}

/// The receiver-side estimators the simulator can run, dispatched by `match` (no vtable on the
/// per-packet path).
#[derive(Clone, Debug)]
pub enum AnyRateEstimator {
    Warc(super::Warc),
    Tear(crate::tear::Tear),
    Tfrcp(crate::tfrcp::Tfrcp),
}

impl AnyRateEstimator {
    /// The scheme's protocol name.
    pub fn name(&self) -> &'static str {
        match self {
            AnyRateEstimator::Warc(_) => "warc",
            AnyRateEstimator::Tear(_) => "tear",
            AnyRateEstimator::Tfrcp(_) => "tfrcp",
        }
    }
}

macro_rules! each {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            AnyRateEstimator::Warc($e) => $body,
            AnyRateEstimator::Tear($e) => $body,
            AnyRateEstimator::Tfrcp($e) => $body,
        }
    };
}

impl RoundEstimator for AnyRateEstimator {
    #[inline]
    fn on_received(&mut self) {
        each!(self, e => e.on_received())
    }
    #[inline]
    fn on_lost(&mut self) {
        each!(self, e => e.on_lost())
    }
    fn on_loss_event(&mut self, u: u32) {
        each!(self, e => RoundEstimator::on_loss_event(e, u))
    }
    fn on_round(&mut self, now: Time, rtt: Dur, rto: Dur) -> f64 {
        each!(self, e => RoundEstimator::on_round(e, now, rtt, rto))
    }
    fn current(&self) -> f64 {
        each!(self, e => e.current())
    }
    fn fill_stats(&self, s: &mut Stats) {
        each!(self, e => e.fill_stats(s))
    }
}

/// A receiver for any of the receiver-driven schemes.
pub type RateReceiver = RoundReceiver<AnyRateEstimator>;
