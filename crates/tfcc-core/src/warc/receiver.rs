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
//! counts down). A round in which a packet was due and none came is *silent*; WARC's emulated
//! window does not grow in it ([`super::WarcConfig::grow_in_silent_rounds`]). Rounds stop once
//! nothing has arrived for `idle_limit` (the sender has stopped), and restart with the next
//! arrival. Before the sender has an RTT sample (header
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
    /// The round about to end is silent: a packet was due and none arrived.
    fn on_silent_round(&mut self) {}
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
    fn on_silent_round(&mut self) {
        super::Warc::on_silent_round(self);
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
    /// The report before `last_report`: the sender may still pace at it.
    prev_report: f64,
    malformed: u64,
}

impl<E: RoundEstimator> RoundReceiver<E> {
    /// Bytes of every report on the wire (a scenario check asks whether a byte-limited queue
    /// on the way back can admit one).
    pub fn feedback_size(&self) -> u32 {
        self.feedback_size
    }

    /// The receiver of a flow whose sender is configured by `sender`: its reports of the
    /// sender's `feedback_size`, its rounds stopping after twice the sender's longest gap
    /// between packets without an arrival. The simulator and the testbed both build it so.
    pub fn for_sender(est: E, sender: &super::RateSenderConfig) -> Self {
        Self::new(
            est,
            sender.feedback_size,
            sender.max_interval.saturating_mul(2),
        )
    }

    /// `idle_limit`: stop the rounds after this long without an arrival; it should exceed the
    /// sender's longest gap between packets ([`super::RateSenderConfig::max_interval`]).
    pub fn new(est: E, feedback_size: u32, idle_limit: Dur) -> Self {
        RoundReceiver {
            last_report: est.current(),
            prev_report: est.current(),
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

    /// Whether the round ending at `now` is silent: no data packet for longer than one round
    /// plus the gap the sender paces at (`SRTT/R`, `R` the lower of the last two reports,
    /// since the newer may not have reached it). A sender slower than a packet per round
    /// leaves rounds empty without being silent.
    fn silent(&self, now: Time) -> bool {
        let r = self.last_report.min(self.prev_report);
        if !(r.is_finite() && r > 0.0) {
            return false;
        }
        let rtt = self.rtt.as_secs_f64();
        let due = rtt + rtt / r;
        now.saturating_since(self.last_arrival).as_secs_f64() > due
    }

    fn report(&mut self, now: Time, rate: f64) {
        self.prev_report = self.last_report;
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
        if self.silent(now) {
            self.est.on_silent_round();
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
        self.scheme().name()
    }

    /// The scheme this estimator runs.
    pub fn scheme(&self) -> super::wire::RateScheme {
        use super::wire::RateScheme;
        match self {
            AnyRateEstimator::Warc(_) => RateScheme::Warc,
            AnyRateEstimator::Tear(_) => RateScheme::Tear,
            AnyRateEstimator::Tfrcp(_) => RateScheme::Tfrcp,
        }
    }

    /// `scheme`'s estimator with its default configuration (003's: Table 3.1 for WARC,
    /// Table 2.1.2 for TEAR and TFRCP).
    pub fn default_for(scheme: super::wire::RateScheme) -> AnyRateEstimator {
        use super::wire::RateScheme;
        match scheme {
            RateScheme::Warc => AnyRateEstimator::Warc(super::Warc::new(Default::default())),
            RateScheme::Tear => AnyRateEstimator::Tear(crate::tear::Tear::new(Default::default())),
            RateScheme::Tfrcp => {
                AnyRateEstimator::Tfrcp(crate::tfrcp::Tfrcp::new(Default::default()))
            }
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
    fn on_silent_round(&mut self) {
        each!(self, e => e.on_silent_round())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warc::wire::DataHeader;
    use crate::warc::WarcConfig;

    fn data(seq: u64, ms: u64) -> Packet {
        Packet {
            size: 1000,
            header: Header::WarcData(DataHeader {
                seq,
                sent_at: Time::from_millis(ms),
                rtt: Dur::from_millis(100),
                rto: Dur::from_millis(300),
            }),
        }
    }

    /// A round is silent once no packet came for a round plus the sender's gap at the lower
    /// of the last two reports: at 10 packets per RTT 110 ms, at a quarter 500 ms, so a sender
    /// slower than a packet per round does not make its empty rounds silent.
    #[test]
    fn a_round_is_silent_only_when_a_packet_was_due() {
        let mut rx = WarcReceiver::warc(WarcConfig::default(), 40);
        rx.on_packet(Time::ZERO, &data(0, 0));
        for (reports, quiet_ms, loud_ms) in [([10.0, 10.0], 111, 109), ([0.25, 4.0], 501, 499)] {
            rx.report(Time::ZERO, reports[0]);
            rx.report(Time::ZERO, reports[1]);
            assert!(rx.silent(Time::from_millis(quiet_ms)), "{reports:?}");
            assert!(!rx.silent(Time::from_millis(loud_ms)), "{reports:?}");
        }
    }
}
