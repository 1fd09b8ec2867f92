//! The TFRC receiver (004 Sec. 3.2, 3.4, 3.6.1–3.6.2; RFC 5348 §5–6): loss detection and loss
//! events through [`crate::loss_events`], the loss history of [`crate::loss_history`], history
//! seeding after slowstart, the receive rate, and one report per RTT.

use crate::endpoint::{Endpoint, Receiver, Stats};
use crate::equation::Equation;
use crate::loss_events::{Arrival, Judgement, LossPipeline};
use crate::loss_history::{AnyEstimator, LossEstimator, PacketOutcome};
use crate::packet::{Header, Packet};
use crate::time::{Dur, Time};

use super::config::{LossEventRtt, SeedRule, TfrcConfig};
use super::wire::{DataHeader, FeedbackHeader};

/// A TFRC receiver.
///
/// Reports are generated on data arrival (004 Sec. 3.2: "immediately after a packet arrives")
/// or by the report timer, which runs only while a packet is unreported, so the receiver sends
/// nothing while no data arrives (Sec. 3.1: "only [...] when at least one packet was received
/// since the last report"), but for the `ns2` preset's one repeated report (below). A report
/// goes out
/// - for the first data packet (RFC 5348 §6.3: the sender needs its first RTT sample);
/// - when at least one RTT (the sender's, from the header) has passed since the last report;
/// - at once when the slowstart-ending loss is seen and the history is seeded (004 Sec. 3.6.1)
///   and, with [`TfrcConfig::report_on_loss_event`] (RFC 5348 §6.1; not the thesis, whose
///   reports go once per RTT, 004 Sec. 3.1), on every later new loss event;
/// - with [`TfrcConfig::report_timer`], from its timer one RTT after the last report if a
///   packet arrived since and none has triggered a report (004 Sec. 3.1, RFC 5348 §6.2); 1.5
///   RTTs under the `ns2` preset ([`TfrcConfig::report_timer_rtts`]), where the timer also
///   repeats a report made at an arrival that nothing followed
///   ([`TfrcConfig::report_timer_repeat`], ns-2.35's `TFRCSink`).
#[derive(Clone, Debug)]
pub struct TfrcReceiver {
    cfg: TfrcConfig,
    eq: Equation,
    pipeline: LossPipeline<AnyEstimator>,
    /// Lost packets seen before the history was seeded (004 Sec. 3.6.1 counts packets).
    lost_before_seed: u64,
    seeded: bool,
    /// The latest data header and its arrival time, echoed in the next report.
    last: Option<(DataHeader, Time)>,
    /// The smoothed RTT from the latest data header (zero until the sender has one).
    rtt: Dur,
    /// The latest RTT sample from the latest data header that had one (zero until then): 004
    /// Sec. 3.4's `t_RTT_cur`, for grouping losses under [`LossEventRtt::Sample`].
    rtt_sample: Dur,
    /// Bytes since the last report, and when that report went (or the first arrival).
    bytes_since: u64,
    since: Option<Time>,
    /// Bytes and span the last report's `X_recv` covered.
    prev_bytes: u64,
    prev_span: Dur,
    last_report: Option<Time>,
    /// When the last accepted data packet arrived (ns-2's `last_arrival_`, for
    /// [`TfrcConfig::report_timer_repeat`]).
    last_arrival: Option<Time>,
    /// A data packet arrived since the last report (the report timer's condition).
    unreported: bool,
    /// The report waiting for `poll_transmit`, and when it was made.
    pending: Option<(Packet, Time)>,
    delivered: u64,
    reports: u64,
    /// Last reported `p` and `X_recv`.
    p: f64,
    x_recv: f64,
}

impl TfrcReceiver {
    /// Bytes of every feedback report on the wire (a scenario check asks whether a
    /// byte-limited queue on the way back can admit one).
    pub fn feedback_size(&self) -> u32 {
        self.cfg.feedback_size
    }

    /// A receiver for `cfg`. An estimator configuration that cannot be built (which
    /// [`TfrcConfig::validate`] reports) falls back to the thesis' estimator rather than panic.
    pub fn new(cfg: TfrcConfig) -> TfrcReceiver {
        // A configuration that does not build (which `TfrcConfig::validate` reports to the
        // scenario loader) falls back to the thesis' estimator rather than fail here.
        let estimator = match cfg.estimator_config().build() {
            Ok(e) => e,
            Err(_) => TfrcConfig::default()
                .estimator_config()
                .build()
                .expect("the default estimator configuration is valid (tested in config.rs)"),
        };
        TfrcReceiver {
            eq: cfg.equation(),
            pipeline: LossPipeline::new(cfg.detector(), estimator),
            lost_before_seed: 0,
            seeded: false,
            last: None,
            rtt: Dur::ZERO,
            rtt_sample: Dur::ZERO,
            bytes_since: 0,
            since: None,
            prev_bytes: 0,
            prev_span: Dur::ZERO,
            last_report: None,
            last_arrival: None,
            unreported: false,
            pending: None,
            delivered: 0,
            reports: 0,
            p: 0.0,
            x_recv: 0.0,
            cfg,
        }
    }

    /// The loss-event-rate estimator.
    pub fn estimator(&self) -> &AnyEstimator {
        &self.pipeline.estimator
    }

    /// Whether slowstart has ended and the history been seeded.
    pub fn seeded(&self) -> bool {
        self.seeded
    }

    /// Reports sent.
    pub fn reports(&self) -> u64 {
        self.reports
    }

    /// The loss event rate as reported: 0 until the history is seeded ("no loss yet").
    pub fn loss_event_rate(&self) -> f64 {
        if !self.seeded {
            return 0.0;
        }
        match self.pipeline.estimator.loss_event_rate() {
            Some(p) if p.is_finite() => p.clamp(f64::MIN_POSITIVE, 1.0),
            _ => 0.0,
        }
    }

    /// When the report timer wants a report: [`TfrcConfig::report_timer_rtts`] RTTs after the
    /// last report, if a packet has arrived since (004 Sec. 3.1, RFC 5348 §6.2) or, with
    /// [`TfrcConfig::report_timer_repeat`], if the last report was made at the last arrival's
    /// instant (ns-2's `last_arrival_ >= last_report_sent`). `None` while nothing is
    /// unreported, before the first report (the first packet triggers it) and before the
    /// sender has an RTT.
    fn report_due(&self) -> Option<Time> {
        if !self.cfg.report_timer || !(self.unreported || self.repeat_due()) {
            return None;
        }
        if self.pending.is_some() {
            return None;
        }
        let last = self.last_report?;
        // The RTT comes from the data header, which any peer can fill: saturate rather than
        // overflow (a deadline past `Time::MAX` is "never").
        (!self.rtt.is_zero())
            .then(|| last.saturating_add(self.rtt.mul_f64(self.cfg.report_timer_rtts)))
    }

    /// Whether the timer owes ns-2's repeated report ([`TfrcConfig::report_timer_repeat`]):
    /// the last report went at the instant of the last arrival and nothing has come since.
    fn repeat_due(&self) -> bool {
        self.cfg.report_timer_repeat
            && self.last_report.is_some()
            && self.last_arrival == self.last_report
    }

    /// Receive rate in bytes/s over the time since the last report (RFC 5348 §6.2: "the last
    /// RTT"). A report sent early by a loss event covers less than an RTT; its span is then
    /// joined to the previous report's, so a few packets over a short span are not reported as
    /// a collapsed rate (the sender would cut to `2·X_recv`, RFC 5348 §4.3).
    fn receive_rate(&self, now: Time) -> (f64, u64, Dur) {
        let Some(since) = self.since else {
            return (0.0, 0, Dur::ZERO);
        };
        let mut bytes = self.bytes_since;
        let mut span = now.saturating_since(since);
        if span < self.rtt {
            bytes += self.prev_bytes;
            span += self.prev_span;
        }
        let secs = span.as_secs_f64();
        let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
        (rate, bytes, span)
    }

    /// 004 Sec. 3.6.2 / RFC 5348 §6.3.1: one synthetic interval, the one the equation needs to
    /// give the rate slowstart should fall back to.
    fn seed(&mut self, now: Time) {
        let s = self.cfg.packet_size.max(1);
        let target = match self.cfg.seed {
            SeedRule::HalfSendRate => self.last.map_or(0.0, |(h, _)| f64::from(h.rate) / 2.0),
            SeedRule::ReceiveRate => self.receive_rate(now).0,
        };
        let l = self.eq.loss_for_rate(s, self.rtt, target);
        let interval = if l > 0.0 { 1.0 / l } else { 1.0 };
        self.pipeline.estimator.seed(interval);
        self.seeded = true;
    }

    fn on_data(&mut self, now: Time, h: DataHeader, size: u32) {
        if !h.rtt.is_zero() {
            self.rtt = h.rtt;
        }
        if !h.rtt_sample.is_zero() {
            self.rtt_sample = h.rtt_sample;
        }
        // Loss events span 004 Sec. 3.4's current RTT, the sender's latest sample (thesis), or
        // its smoothed RTT (`ns2`, `rfc5348`: RFC 5348 §5.2). The losses this arrival lets the
        // detector judge are grouped with the values in its own header. Before the sender has
        // a sample both are zero (every lost packet its own event); a header with a smoothed
        // RTT but no sample (not one tfcc's sender writes) falls back to the smoothed RTT.
        let event_rtt = match self.cfg.loss_event_rtt {
            LossEventRtt::Sample if !self.rtt_sample.is_zero() => self.rtt_sample,
            _ => self.rtt,
        };
        if self.cfg.loss_event_round {
            // ns-2's `PreciseLoss_ 1`: the round of the arrival that judges the losses.
            self.pipeline.grouper.set_round(h.round);
        }
        let mut lost = 0u64;
        let mut new_event = false;
        let arrival = self
            .pipeline
            .on_arrival_with(h.seq, h.timestamp, event_rtt, |j, outcome| {
                if matches!(j, Judgement::Lost { .. } | Judgement::LostRun { .. }) {
                    lost += j.count();
                }
                new_event |= outcome == PacketOutcome::NewLossEvent;
            });
        match arrival {
            // 004 Sec. 3.4: duplicates are ignored.
            Arrival::Duplicate => return,
            // Numbered below the first packet seen (the flow's first packets reordered): the
            // detector cannot tell a second copy from the first, so none is counted as
            // delivered rather than risk counting one twice.
            Arrival::BeforeStart => return,
            // Overtaken by more than the reordering tolerance: already counted as lost. The
            // detector does not remember which late packets came, so a duplicate of one would
            // count twice; goodput treats it as the loss estimate does.
            Arrival::Late => return,
            Arrival::Accepted => {}
        }
        // Goodput and `X_recv` count payload, the unit of the sender's rate (ns-2's sink
        // reports packets, which its sender multiplies by `packetSize_`).
        let payload = u64::from(size.saturating_sub(self.cfg.header_size));
        self.delivered += payload;
        self.bytes_since += payload;
        self.unreported = true;
        self.last_arrival = Some(now);
        if self.since.is_none() {
            self.since = Some(now);
        }
        if self.last.map_or(true, |(l, _)| h.seq >= l.seq) {
            self.last = Some((h, now));
        }
        let mut report_now = self.last_report.is_none();
        if !self.seeded {
            self.lost_before_seed += lost;
            // The seed inverts the equation at the sender's RTT; before the sender has one
            // (losses in Init RTT mode) seeding waits for the first header that carries it.
            if self.lost_before_seed >= u64::from(self.cfg.slowstart_exit_losses)
                && !self.rtt.is_zero()
            {
                self.seed(now);
                report_now = true;
            }
        } else if new_event && self.cfg.report_on_loss_event {
            report_now = true;
        }
        if let Some(t) = self.last_report {
            report_now |= now.saturating_since(t) >= self.rtt;
        }
        if report_now {
            self.report(now);
        }
    }

    fn report(&mut self, now: Time) {
        let Some((h, arrived)) = self.last else {
            return;
        };
        if self.seeded {
            // Only the dynamic history window uses it (004 Eq. 3.4's `l_exp`).
            let l_exp =
                self.eq
                    .loss_for_rate(self.cfg.packet_size.max(1), self.rtt, f64::from(h.rate));
            self.pipeline.estimator.set_expected_loss_rate(Some(l_exp));
        }
        self.p = self.loss_event_rate();
        let (x_recv, bytes, span) = self.receive_rate(now);
        // ns-2's repeated report counts no packet, and `est_thput` then reports its default,
        // one packet per second ([`TfrcConfig::report_timer_repeat`]).
        self.x_recv = if bytes == 0 && self.repeat_due() {
            f64::from(self.cfg.packet_size.max(1))
        } else {
            x_recv
        };
        self.prev_bytes = bytes;
        self.prev_span = span;
        let fb = FeedbackHeader {
            seq_echo: h.seq,
            timestamp_echo: h.timestamp,
            t_delay: now.saturating_since(arrived),
            x_recv: self.x_recv.clamp(0.0, f64::from(u32::MAX)) as u32,
            p: self.p,
        };
        self.pending = Some((
            Packet {
                size: self.cfg.feedback_size,
                header: Header::TfrcFeedback(fb),
            },
            now,
        ));
        self.reports += 1;
        self.unreported = false;
        self.last_report = Some(now);
        self.since = Some(now);
        self.bytes_since = 0;
    }
}

impl Endpoint for TfrcReceiver {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        if let Header::TfrcData(h) = pkt.header {
            self.on_data(now, h, pkt.size);
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if self.report_due().is_some_and(|t| now >= t) {
            self.report(now);
        }
    }

    /// The pending report, its `t_delay` running to `now`: RFC 5348 §3.2.2 counts the time
    /// from the last data packet's arrival to the report's generation, and the report leaves
    /// when it is polled. In the simulator that is the instant it was made; a real receiver
    /// may poll later (a thread woken late), and that wait must not count as path RTT.
    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        let (mut pkt, made) = self.pending.take()?;
        if let Header::TfrcFeedback(f) = &mut pkt.header {
            f.t_delay += now.saturating_since(made);
        }
        Some(pkt)
    }

    fn next_timeout(&self) -> Option<Time> {
        self.report_due()
    }

    fn stats(&self) -> Stats {
        let p = self.loss_event_rate();
        Stats {
            p: Some(p),
            ali: (p > 0.0).then(|| 1.0 / p),
            rtt: (!self.rtt.is_zero()).then_some(self.rtt),
            loss_events: self.pipeline.estimator.loss_events(),
            packets_judged: self.pipeline.detector.stats().judged,
            rate: Some(self.x_recv),
            mode: if self.seeded {
                "receiver"
            } else {
                "receiver-slowstart"
            },
            ..Stats::default()
        }
    }
}

impl Receiver for TfrcReceiver {
    fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tfrc::wire::Mode;

    const S: u32 = 1460;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn data(seq: u64, sent: Time, rtt_ms: u64, rate: u32) -> Packet {
        Packet {
            size: S,
            header: Header::TfrcData(DataHeader {
                seq,
                timestamp: sent,
                rtt: Dur::from_millis(rtt_ms),
                rtt_sample: Dur::from_millis(rtt_ms),
                rate,
                mode: Mode::CongestionControl,
                round: 0,
            }),
        }
    }

    /// Feeds `seqs` (sent 4 ms apart, arriving 80 ms later) and returns the reports.
    fn feed(
        r: &mut TfrcReceiver,
        seqs: impl IntoIterator<Item = u64>,
        rtt_ms: u64,
        rate: u32,
    ) -> Vec<(u64, FeedbackHeader)> {
        let mut out = Vec::new();
        for q in seqs {
            let sent = Time::from_millis(4 * q);
            r.on_packet(sent + Dur::from_millis(80), &data(q, sent, rtt_ms, rate));
            if let Some(p) = r.poll_transmit(sent) {
                let Header::TfrcFeedback(f) = p.header else {
                    panic!("not feedback")
                };
                assert_eq!(p.size, 40);
                out.push((q, f));
            }
        }
        out
    }

    #[test]
    fn a_report_polled_late_counts_the_wait_in_its_t_delay() {
        // The first packet arrives at 80 ms and is reported at once; a transport that polls
        // 7 ms later (a thread woken late) must not make that wait look like path RTT.
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        r.on_packet(Time::from_millis(80), &data(0, Time::ZERO, 0, 365_000));
        let p = r
            .poll_transmit(Time::from_millis(87))
            .expect("first report");
        let Header::TfrcFeedback(f) = p.header else {
            panic!("not feedback")
        };
        assert_eq!(f.t_delay, Dur::from_millis(7));
        assert_eq!(f.timestamp_echo, Time::ZERO);
        assert!(r.poll_transmit(Time::from_millis(88)).is_none());
    }

    #[test]
    fn reports_go_for_the_first_packet_then_once_per_rtt() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let reports = feed(&mut r, 0..100, 100, 365_000);
        let at: Vec<u64> = reports.iter().map(|(q, _)| *q).collect();
        assert_eq!(at, [0, 25, 50, 75]); // 25 packets of 4 ms = one 100 ms RTT
        let (_, f) = reports[2];
        assert_eq!(f.seq_echo, 50);
        assert_eq!(f.timestamp_echo, Time::from_millis(200));
        assert_eq!(f.t_delay, Dur::ZERO);
        assert_eq!(f.p, 0.0); // no loss yet
        assert_eq!(f.x_recv, 25 * S * 10); // 25 packets in 0.1 s
        assert_eq!(r.delivered_bytes(), 100 * u64::from(S));
    }

    #[test]
    fn the_second_lost_packet_ends_slowstart_and_seeds_half_the_sending_rate() {
        // Spec 004 §2.10's example: b_sst/2 = 187.5 KB/s, s = 1460 B, R = 0.16 s, b = 1,
        // k = 4 gives l_exp ≈ 0.00335 and ppl_0 ≈ 299.
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let seqs = (0..200).filter(|&q| q != 50 && q != 52);
        let mut reports = Vec::new();
        for q in seqs {
            reports.extend(feed(&mut r, [q], 160, 375_000));
            if q == 55 {
                assert!(!r.seeded(), "one lost packet must not end slowstart");
            }
        }
        assert!(r.seeded());
        // Seq 52 is judged lost when the 4th higher packet (56) arrives: a report at once.
        let (q, f) = reports.iter().find(|(_, f)| f.p > 0.0).unwrap();
        assert_eq!(*q, 56);
        assert!((1.0 / f.p - 299.0).abs() < 1.0, "ppl_0 = {}", 1.0 / f.p);
        assert_eq!(r.estimator().loss_events(), 1);
    }

    #[test]
    fn the_rfc_preset_seeds_at_the_first_loss_from_the_receive_rate() {
        let cfg = TfrcConfig::rfc5348();
        assert_eq!((cfg.packet_size, cfg.header_size), (S, 0));
        let eq = cfg.equation();
        let mut r = TfrcReceiver::new(cfg);
        let reports = feed(&mut r, (0..100).filter(|&q| q != 50), 100, 999_999);
        assert!(r.seeded());
        let (q, f) = reports.iter().find(|(_, f)| f.p > 0.0).unwrap();
        assert_eq!(*q, 53); // NDUPACK = 3
                            // Receive rate: the report at 53 comes 8 ms after the one at 51, so it joins the
                            // previous span (25 packets from arrival 180 ms to 284 ms): 27 packets in 112 ms.
        let want = eq.loss_for_rate(S, Dur::from_millis(100), 27.0 * f64::from(S) / 0.112);
        assert!((f.p / want - 1.0).abs() < 1e-9, "{} vs {want}", f.p);
    }

    /// ns-2.35's `TFRCSink` (`numPkts_ 1`) judges a gap lost at the first later arrival,
    /// where RFC 5348's NDUPACK waits for the third: the `ns2` preset ends slowstart and
    /// reports at packet 51, the `rfc5348` preset at 53.
    #[test]
    fn under_ns2_a_gap_is_a_loss_at_the_first_later_arrival() {
        let at = |cfg: TfrcConfig| {
            let mut r = TfrcReceiver::new(TfrcConfig {
                packet_size: S,
                header_size: 0,
                ..cfg
            });
            let reports = feed(&mut r, (0..100).filter(|&q| q != 50), 100, 999_999);
            reports.iter().find(|(_, f)| f.p > 0.0).unwrap().0
        };
        assert_eq!(TfrcConfig::ns2().reorder_tolerance, 0);
        assert_eq!(at(TfrcConfig::ns2()), 51);
        assert_eq!(at(TfrcConfig::rfc5348()), 53);
    }

    #[test]
    fn with_report_on_loss_event_a_new_loss_event_is_reported_at_once_and_raises_p() {
        // The seed at R = 0.1 s is ≈ 126 packets (spec 004 §2.10); a loss event 50 packets
        // later (two RTTs) closes a short interval in INC mode and raises p. RFC 5348 §6.1
        // (the `ns2` and `rfc5348` presets) reports it when it is judged, at seq 104.
        let mut r = TfrcReceiver::new(TfrcConfig {
            report_on_loss_event: true,
            ..TfrcConfig::default()
        });
        let lost = [50u64, 52, 100];
        let reports = feed(&mut r, (0..200).filter(|q| !lost.contains(q)), 100, 365_000);
        let i = reports.iter().position(|(q, _)| *q == 104).unwrap();
        assert!(reports[i].1.p > reports[i - 1].1.p);
        assert_eq!(r.estimator().loss_events(), 2);
        assert!(TfrcConfig::ns2().report_on_loss_event);
        assert!(TfrcConfig::rfc5348().report_on_loss_event);
    }

    /// 004 Sec. 3.1: reports go "once per RTT since this is the delay of the control system";
    /// the only early report the thesis names is slowstart's end (Sec. 3.6.1). The same loss
    /// event as above is judged at seq 104 but reported with the next report of the once-per-RTT
    /// schedule (25 packets of 4 ms each from the seed's early report at 56: 81, 106), which
    /// carries the raised p. Fails on the rule before 2026-11-26 (a report at 104).
    #[test]
    fn the_thesis_receiver_reports_a_new_loss_event_with_the_next_report_once_per_rtt() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let lost = [50u64, 52, 100];
        let reports = feed(&mut r, (0..200).filter(|q| !lost.contains(q)), 100, 365_000);
        let at: Vec<u64> = reports.iter().map(|(q, _)| *q).collect();
        assert_eq!(at, [0, 25, 51, 56, 81, 106, 131, 156, 181], "{at:?}");
        let i = at.iter().position(|&q| q == 106).unwrap();
        assert!(reports[i].1.p > reports[i - 1].1.p);
        assert_eq!(r.estimator().loss_events(), 2);
    }

    /// Feeds `0..300` except `lost`, sent 4 ms apart and arriving 80 ms later, every header
    /// carrying the smoothed RTT `rtt_ms` and the latest sample `sample_ms`, and a sender
    /// round that advances every 25 packets (100 ms); returns the loss events after the first
    /// (the one that ends slowstart and seeds the history).
    fn events_after_the_seed(cfg: TfrcConfig, lost: &[u64], rtt_ms: u64, sample_ms: u64) -> u64 {
        events_with_rounds(cfg, lost, rtt_ms, sample_ms, |q| (q / 25) as u32)
    }

    /// As [`events_after_the_seed`], packet `q` carrying the round `round(q)`.
    fn events_with_rounds(
        cfg: TfrcConfig,
        lost: &[u64],
        rtt_ms: u64,
        sample_ms: u64,
        round: impl Fn(u64) -> u32,
    ) -> u64 {
        let mut r = TfrcReceiver::new(TfrcConfig {
            packet_size: S,
            header_size: 0,
            ..cfg
        });
        for q in (0..300).filter(|q| !lost.contains(q)) {
            let sent = Time::from_millis(4 * q);
            let mut pkt = data(q, sent, rtt_ms, 365_000);
            if let Header::TfrcData(h) = &mut pkt.header {
                h.rtt_sample = Dur::from_millis(sample_ms);
                h.round = round(q);
            }
            r.on_packet(sent + Dur::from_millis(80), &pkt);
        }
        assert!(r.seeded());
        r.estimator().loss_events() - 1
    }

    /// ns-2.35's `PreciseLoss_ 1`: two losses 400 ms apart (four RTTs) judged by arrivals of
    /// the same sender round (the sender took no report in between) are one event under the
    /// `ns2` preset and two under the RTT rule alone (`rfc5348`, or `ns2` with the field off);
    /// once the round advances between them they are two in every preset.
    #[test]
    fn under_ns2_losses_in_one_sender_round_are_one_event_however_far_apart() {
        let lost = [50u64, 52, 200, 300 - 10];
        let stuck = |q: u64| if q < 150 { (q / 25) as u32 } else { 6 };
        assert!(TfrcConfig::ns2().loss_event_round);
        assert!(!TfrcConfig::rfc5348().loss_event_round);
        assert_eq!(
            events_with_rounds(TfrcConfig::ns2(), &lost, 100, 100, stuck),
            1
        );
        assert_eq!(
            events_with_rounds(TfrcConfig::rfc5348(), &lost, 100, 100, stuck),
            2
        );
        let off = TfrcConfig {
            loss_event_round: false,
            ..TfrcConfig::ns2()
        };
        assert_eq!(events_with_rounds(off, &lost, 100, 100, stuck), 2);
        assert_eq!(events_after_the_seed(TfrcConfig::ns2(), &lost, 100, 100), 2);
    }

    /// 004 Sec. 3.4: "it is important that the receiver uses the current RTT `t_RTT_cur` and
    /// not the smoothed RTT to determine which lost packets form a loss event". Slowstart into
    /// a buffer: the latest sample (400 ms) is four times the smoothed RTT (100 ms, β = 0.05
    /// lagging the queue). Losses at seq 200 and 240 are 160 ms apart, more than one smoothed
    /// RTT and less than one sample: one event under the thesis preset, two under `ns2` and
    /// `rfc5348`, which group with the smoothed RTT (RFC 5348 §5.2, ns-2's `rtt_`).
    #[test]
    fn losses_within_one_sample_but_one_smoothed_rtt_apart_are_one_event_only_in_the_thesis() {
        let lost = [50u64, 52, 200, 240];
        assert_eq!(TfrcConfig::default().loss_event_rtt, LossEventRtt::Sample);
        assert_eq!(
            events_after_the_seed(TfrcConfig::default(), &lost, 100, 400),
            1
        );
        for cfg in [TfrcConfig::ns2(), TfrcConfig::rfc5348()] {
            assert_eq!(cfg.loss_event_rtt, LossEventRtt::Smoothed);
            assert_eq!(events_after_the_seed(cfg, &lost, 100, 400), 2);
        }
        // With the sample no larger than the smoothed RTT the presets agree.
        assert_eq!(
            events_after_the_seed(TfrcConfig::default(), &lost, 100, 100),
            2
        );
    }

    /// Before the sender has an RTT sample the header's is zero; grouping falls back to the
    /// smoothed RTT (losses 160 ms apart within its 400 ms: one event) and, with that zero
    /// too, every lost packet is its own event.
    #[test]
    fn a_zero_sample_falls_back_to_the_smoothed_rtt() {
        let lost = [50u64, 52, 200, 240];
        assert_eq!(
            events_after_the_seed(TfrcConfig::default(), &lost, 400, 0),
            1
        );
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        for q in (0..100).filter(|q| ![50, 52, 60, 61].contains(q)) {
            let sent = Time::from_millis(4 * q);
            r.on_packet(sent + Dur::from_millis(80), &data(q, sent, 0, 365_000));
        }
        assert_eq!(r.estimator().loss_events(), 4);
    }

    /// Losses are judged when the `reorder_tolerance + 1`-th packet above the gap arrives, and
    /// grouped with the sample in that packet's header: after an outage, a sample taken after
    /// it, not the one the lost packets carried (E11's 30 s dropout, docs/reproductions/log/tfrc.md
    /// "Loss events grouped by the current RTT"). Here 250 packets are lost 120 ms apart: the
    /// packets before carry a 170 ms sample, the first after the gap one of 30 s (a packet held
    /// through the outage), the next three the path's 108 ms again: 250 events.
    #[test]
    fn losses_after_an_outage_are_grouped_with_the_sample_of_the_packet_that_judges_them() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let send = |r: &mut TfrcReceiver, q: u64, sent_ms: u64, sample_ms: u64| {
            let sent = Time::from_millis(sent_ms);
            let mut pkt = data(q, sent, 180, 90_000);
            if let Header::TfrcData(h) = &mut pkt.header {
                h.rtt_sample = Dur::from_millis(sample_ms);
            }
            r.on_packet(sent + Dur::from_millis(60), &pkt);
        };
        // Slowstart ends at seq 52 (the seed, one event), then no loss up to 99.
        for q in (0..100).filter(|q| *q != 50 && *q != 52) {
            send(&mut r, q, 15 * q, 170);
        }
        assert_eq!(r.estimator().loss_events(), 1);
        // 100..=349 lost in the outage; 350 was sent 120 ms after each of them in turn.
        let t0 = 15 * 99;
        send(&mut r, 350, t0 + 120 * 251, 30_000);
        assert_eq!(r.estimator().loss_events(), 1, "not judged yet");
        for (k, q) in (351..=353).enumerate() {
            send(&mut r, q, t0 + 120 * 251 + 300 * (k as u64 + 1), 108);
        }
        assert_eq!(r.estimator().loss_events(), 1 + 250);
    }

    #[test]
    fn a_loss_after_a_long_quiet_stretch_leaves_p_unchanged() {
        // 004 Sec. 3.4.3: in DEC mode (the open interval already lowers the estimate) a loss
        // event leaves the estimate where it was.
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let lost = [50u64, 52, 300];
        let reports = feed(&mut r, (0..400).filter(|q| !lost.contains(q)), 100, 365_000);
        // The event is judged at seq 304 and reported with the next report of the once-per-RTT
        // schedule (306; 004 Sec. 3.1), the one before it being the report at 281.
        let i = reports.iter().position(|(q, _)| *q >= 304).unwrap();
        assert_eq!((reports[i - 1].0, reports[i].0), (281, 306));
        let (before, after) = (reports[i - 1].1.p, reports[i].1.p);
        assert!(after <= before * (1.0 + 1e-9), "{before} -> {after}");
    }

    #[test]
    fn seeding_waits_for_an_rtt_in_the_header() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        feed(&mut r, (0..20).filter(|&q| q != 5 && q != 7), 0, 1460);
        assert!(!r.seeded());
        let reports = feed(&mut r, [20], 100, 1460);
        assert!(r.seeded());
        assert!(reports[0].1.p > 0.0);
    }

    #[test]
    fn the_report_timer_reports_a_packet_no_later_packet_follows() {
        // 004 Sec. 3.1: below one packet per RTT a report goes once per RTT if a packet
        // arrived since the last one. Packet 0 is reported on arrival (at 80 ms); packet 1
        // arrives 100 ms later, inside the 1 s RTT, and nothing follows it.
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        r.on_packet(ms(80), &data(0, ms(0), 1000, 1460));
        assert!(r.poll_transmit(ms(80)).is_some());
        assert_eq!(r.next_timeout(), None, "nothing unreported");
        r.on_packet(ms(180), &data(1, ms(100), 1000, 1460));
        assert!(
            r.poll_transmit(ms(180)).is_none(),
            "less than an RTT since the last report"
        );
        assert_eq!(r.next_timeout(), Some(ms(1080)));
        r.on_timeout(ms(1079));
        assert!(
            r.poll_transmit(ms(1079)).is_none(),
            "an early call is a no-op"
        );
        r.on_timeout(ms(1080));
        let Some(Packet {
            header: Header::TfrcFeedback(f),
            ..
        }) = r.poll_transmit(ms(1080))
        else {
            panic!("no report from the timer")
        };
        assert_eq!(f.seq_echo, 1);
        assert_eq!(f.timestamp_echo, ms(100));
        // The holding time, which the sender subtracts from its RTT sample (004 Sec. 3.3).
        assert_eq!(f.t_delay, Dur::from_millis(900));
        assert_eq!(
            r.next_timeout(),
            None,
            "reported; the timer waits for new data"
        );
    }

    /// ns-2.35's `TFRCSink`: its timer goes 1.5 RTTs after a report, and sends when
    /// `last_arrival_ >= last_report_sent`, so a report made at an arrival is repeated by the
    /// timer with nothing new in it, `X_recv` one packet per second (`est_thput`'s default).
    /// RFC 5348 §6.2 (the `rfc5348` preset) sends nothing then.
    #[test]
    fn under_ns2_the_timer_repeats_a_report_made_at_an_arrival_1_5_rtts_later() {
        let cfg = |c: TfrcConfig| TfrcConfig {
            packet_size: S,
            header_size: 0,
            ..c
        };
        let mut r = TfrcReceiver::new(cfg(TfrcConfig::ns2()));
        r.on_packet(ms(80), &data(0, ms(0), 1000, 1460));
        assert!(r.poll_transmit(ms(80)).is_some());
        assert_eq!(
            r.next_timeout(),
            Some(ms(1580)),
            "1.5 RTTs after the report"
        );
        r.on_timeout(ms(1580));
        let Some(Packet {
            header: Header::TfrcFeedback(f),
            ..
        }) = r.poll_transmit(ms(1580))
        else {
            panic!("no repeated report")
        };
        assert_eq!(f.seq_echo, 0);
        assert_eq!(f.x_recv, S, "one packet per second");
        assert_eq!(f.t_delay, Dur::from_millis(1500));
        assert_eq!(r.next_timeout(), None, "repeated once only");
        // A packet inside the RTT is reported by the timer 1.5 RTTs after the last report.
        r.on_packet(ms(1680), &data(1, ms(1600), 1000, 1460));
        assert!(r.poll_transmit(ms(1680)).is_none());
        assert_eq!(r.next_timeout(), Some(ms(3080)));

        let mut r = TfrcReceiver::new(cfg(TfrcConfig::rfc5348()));
        r.on_packet(ms(80), &data(0, ms(0), 1000, 1460));
        assert!(r.poll_transmit(ms(80)).is_some());
        assert_eq!(r.next_timeout(), None, "nothing new to report");
    }

    #[test]
    fn without_the_report_timer_only_arrivals_trigger_reports() {
        let cfg = TfrcConfig {
            report_timer: false,
            ..TfrcConfig::default()
        };
        let mut r = TfrcReceiver::new(cfg);
        r.on_packet(ms(80), &data(0, ms(0), 1000, 1460));
        let _ = r.poll_transmit(ms(80));
        r.on_packet(ms(180), &data(1, ms(100), 1000, 1460));
        assert_eq!(r.next_timeout(), None);
    }

    #[test]
    fn duplicates_are_not_delivered_twice() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        feed(&mut r, [0, 1, 1, 2], 100, 1);
        assert_eq!(r.delivered_bytes(), 3 * u64::from(S));
    }

    #[test]
    fn goodput_and_the_receive_rate_count_payload_not_headers() {
        // ns-2: 1032 B on the wire, 1000 B of payload (`headersize_ 32`).
        let mut r = TfrcReceiver::new(TfrcConfig::ns2());
        let wire = |seq: u64, at: u64| Packet {
            size: 1032,
            ..data(seq, Time::from_millis(at), 100, 40_000)
        };
        for k in 0..11u64 {
            r.on_packet(Time::from_millis(80 + 10 * k), &wire(k, 10 * k));
            let _ = r.poll_transmit(Time::from_millis(80 + 10 * k));
        }
        assert_eq!(r.delivered_bytes(), 11_000);
        // The report at the 11th packet, 100 ms after the first: 10 packets of 1000 B since.
        assert!((r.stats().rate.unwrap() - 100_000.0).abs() < 1e-6);
    }

    /// A data header is untrusted input: a well-formed one with an RTT near `u64::MAX`
    /// nanoseconds (garbage, or a hostile peer) made the report timer overflow
    /// (`last_report + rtt`) and panicked `tfcc recv`.
    #[test]
    fn a_header_rtt_near_u64_max_does_not_overflow_the_report_timer() {
        let mut r = TfrcReceiver::new(TfrcConfig::default());
        let mut h = DataHeader {
            seq: 0,
            timestamp: Time::ZERO,
            rtt: Dur::from_millis(10),
            rtt_sample: Dur::from_millis(10),
            rate: 1,
            mode: Mode::Slowstart,
            round: 0,
        };
        r.on_packet(
            ms(1),
            &Packet {
                size: S,
                header: Header::TfrcData(h),
            },
        );
        assert!(r.poll_transmit(ms(1)).is_some());
        h.seq = 1;
        h.rtt = Dur(u64::MAX - 1);
        r.on_packet(
            ms(2),
            &Packet {
                size: S,
                header: Header::TfrcData(h),
            },
        );
        let due = r.next_timeout();
        assert_eq!(due, Some(Time::MAX));
        r.on_timeout(ms(3));
        let _ = r.poll_transmit(ms(3));
    }

    use crate::testing::wild_u64;

    proptest::proptest! {
        /// Headers with any field values, as a peer could send them, in any order and at any
        /// (non-decreasing) times: the receiver never panics and its outputs stay in range.
        #[test]
        fn any_header_values_never_panic(
            msgs in proptest::collection::vec(
                (wild_u64(), wild_u64(), wild_u64(), proptest::num::u32::ANY, 0u64..(1u64 << 40)),
                1..100),
            ns2 in proptest::bool::ANY,
        ) {
            let cfg = if ns2 { TfrcConfig::ns2() } else { TfrcConfig::default() };
            let mut r = TfrcReceiver::new(cfg);
            let mut now = Time::ZERO;
            for (seq, ts, rtt, rate, step) in msgs {
                now = now.saturating_add(Dur(step));
                let h = DataHeader { seq, timestamp: Time(ts), rtt: Dur(rtt), rtt_sample: Dur(rtt / 2), rate, mode: Mode::CongestionControl, round: 0 };
                r.on_packet(now, &Packet { size: S, header: Header::TfrcData(h) });
                // Time never goes backwards: a deadline is served when the clock reaches it.
                if let Some(t) = r.next_timeout().filter(|t| *t <= now.saturating_add(Dur(step))) {
                    now = now.max(t);
                    r.on_timeout(now);
                }
                while let Some(p) = r.poll_transmit(now) {
                    let Header::TfrcFeedback(f) = p.header else { panic!() };
                    proptest::prop_assert!((0.0..=1.0).contains(&f.p));
                }
                let st = r.stats();
                proptest::prop_assert!((0.0..=1.0).contains(&st.p.unwrap()));
            }
        }

        /// Any arrival order, duplicates, gaps and RTTs: no panic, `p` stays a probability,
        /// at most one report per arrival, and no packet counted as delivered twice.
        #[test]
        fn any_arrival_pattern_keeps_p_a_probability(
            arrivals in proptest::collection::vec((0u64..300, 0u64..300, proptest::bool::ANY), 1..400),
            ns2 in proptest::bool::ANY,
        ) {
            let cfg = if ns2 { TfrcConfig { packet_size: S, ..TfrcConfig::ns2() } } else { TfrcConfig::default() };
            let mut r = TfrcReceiver::new(cfg);
            let mut seen = std::collections::HashSet::new();
            let first = arrivals[0].0;
            let mut reports = 0u64;
            for (k, (seq, rtt, slow)) in arrivals.iter().enumerate() {
                let now = Time::from_millis(10 * k as u64);
                r.on_packet(now, &data(*seq, Time::from_millis(*seq), *rtt, if *slow { 1 } else { 365_000 }));
                if *seq >= first {
                    seen.insert(*seq);
                }
                if let Some(p) = r.poll_transmit(now) {
                    reports += 1;
                    let Header::TfrcFeedback(f) = p.header else { panic!() };
                    proptest::prop_assert!((0.0..=1.0).contains(&f.p));
                }
                proptest::prop_assert!(r.poll_transmit(now).is_none());
            }
            proptest::prop_assert!(reports <= arrivals.len() as u64);
            proptest::prop_assert!(r.delivered_bytes() <= seen.len() as u64 * u64::from(S));
            let p = r.stats().p.unwrap();
            proptest::prop_assert!((0.0..=1.0).contains(&p));
        }
    }
}
