//! The rate-paced sender of the receiver-driven schemes (WARC, TEAR, TFRCP): it sends one
//! packet every `SRTT / R`, where `R` packets per RTT is the receiver's latest report (003
//! Sec. 3.2.1). All the congestion control is at the receiver; the sender measures the RTT
//! from echoed send times, carries SRTT and RTO to the receiver in every data packet, and halves
//! its rate when reports stop (RFC 5348 §4.4, see [`RateSenderConfig::nofeedback_rtts`]).

use super::config::RateSenderConfig;
use super::wire::{DataHeader, FeedbackHeader};
use crate::endpoint::{Endpoint, Sender, Stats};
use crate::packet::{Header, Packet};
use crate::rtt::TcpRtt;
use crate::time::{Dur, Time};

/// A bulk sender paced at its receiver's reported rate.
#[derive(Clone, Debug)]
pub struct RateSender {
    cfg: RateSenderConfig,
    rtt: TcpRtt,
    /// Reported rate in packets per RTT; `None` before the first report.
    rate: Option<f64>,
    seq: u64,
    started: bool,
    next_send: Option<Time>,
    last_sent: Option<Time>,
    nofeedback_at: Option<Time>,
    packets_sent: u64,
    bytes_sent: u64,
    reports: u64,
    nofeedback_expiries: u64,
    malformed: u64,
}

impl RateSender {
    pub fn new(cfg: RateSenderConfig) -> RateSender {
        RateSender {
            rtt: TcpRtt::new(cfg.rtt),
            cfg,
            rate: None,
            seq: 0,
            started: false,
            next_send: None,
            last_sent: None,
            nofeedback_at: None,
            packets_sent: 0,
            bytes_sent: 0,
            reports: 0,
            nofeedback_expiries: 0,
            malformed: 0,
        }
    }

    pub fn config(&self) -> &RateSenderConfig {
        &self.cfg
    }
    /// The reported rate in packets per RTT, once a report has arrived.
    pub fn rate_packets_per_rtt(&self) -> Option<f64> {
        self.rate
    }
    /// Reports received and no-feedback expiries (for tests and logs).
    pub fn reports(&self) -> u64 {
        self.reports
    }
    pub fn nofeedback_expiries(&self) -> u64 {
        self.nofeedback_expiries
    }

    /// The gap between packets now: `SRTT/R`, within `[1 ns, max_interval]`.
    fn interval(&self) -> Dur {
        match (self.rate, self.rtt.srtt()) {
            (Some(r), Some(srtt)) if r > 0.0 => {
                let secs = srtt.as_secs_f64() / r;
                if secs.is_finite() {
                    Dur::from_secs_f64(secs)
                        .min(self.cfg.max_interval)
                        .max(Dur(1))
                } else {
                    self.cfg.max_interval
                }
            }
            (Some(_), _) => self.cfg.max_interval,
            (None, _) => self.cfg.initial_interval,
        }
    }

    /// The no-feedback timeout: `nofeedback_rtts × SRTT`, at least two packet gaps (RFC 5348
    /// §4.4); 2 s before an RTT sample (RFC 5348 §4.2).
    fn nofeedback_timeout(&self) -> Dur {
        match self.rtt.srtt() {
            Some(srtt) => srtt
                .mul_f64(self.cfg.nofeedback_rtts)
                .max(self.interval().saturating_mul(2)),
            None => Dur::from_secs(2),
        }
    }

    fn on_feedback(&mut self, now: Time, f: &FeedbackHeader) {
        if f.echo > now || !(f.rate.is_finite() && f.rate >= 0.0) {
            self.malformed += 1;
            return;
        }
        self.reports += 1;
        // RFC 5348 §4.3 `R_sample`, floored: a hold covering the whole round trip is no RTT.
        let sample = now
            .saturating_since(f.echo)
            .saturating_sub(f.hold)
            .max(self.cfg.min_rtt_sample.max(Dur(1)));
        self.rtt.on_sample(sample);
        self.rate = Some(f.rate);
        self.nofeedback_at = Some(now.saturating_add(self.nofeedback_timeout()));
        // A faster rate takes effect now, not after the old (longer) gap.
        if let (Some(last), Some(next)) = (self.last_sent, self.next_send) {
            let sooner = last.saturating_add(self.interval()).max(now);
            if sooner < next {
                self.next_send = Some(sooner);
            }
        }
    }
}

impl Endpoint for RateSender {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        match pkt.header {
            Header::WarcFeedback(f) => self.on_feedback(now, &f),
            _ => self.malformed += 1,
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if let Some(at) = self.nofeedback_at {
            if now >= at {
                self.nofeedback_expiries += 1;
                if let Some(r) = &mut self.rate {
                    *r /= 2.0;
                }
                self.nofeedback_at = Some(now.saturating_add(self.nofeedback_timeout()));
            }
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if !self.started {
            self.started = true;
            self.next_send = Some(now);
            self.nofeedback_at = Some(now.saturating_add(self.nofeedback_timeout()));
        }
        let due = self.next_send?;
        if due > now {
            return None;
        }
        let gap = self.interval();
        // Keep the schedule (no drift), but never catch up a backlog in a burst.
        let next = due.saturating_add(gap);
        self.next_send = Some(if next <= now {
            now.saturating_add(gap)
        } else {
            next
        });
        self.last_sent = Some(now);
        let header = DataHeader {
            seq: self.seq,
            sent_at: now,
            rtt: self.rtt.srtt().unwrap_or(Dur::ZERO),
            rto: self.rtt.rto(),
        };
        self.seq += 1;
        self.packets_sent += 1;
        self.bytes_sent += u64::from(self.cfg.packet_size);
        Some(Packet {
            size: self.cfg.packet_size,
            header: Header::WarcData(header),
        })
    }

    fn next_timeout(&self) -> Option<Time> {
        match (self.next_send, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn stats(&self) -> Stats {
        let mut s = Stats {
            rtt: self.rtt.srtt(),
            rto: Some(self.rtt.rto()),
            ..Stats::default()
        };
        if let (Some(r), Some(srtt)) = (self.rate, self.rtt.srtt()) {
            let secs = srtt.as_secs_f64();
            if secs > 0.0 {
                s.rate = Some(r * f64::from(self.cfg.packet_size) / secs);
            }
            s.cwnd = Some(r);
        }
        s.packets_sent = self.packets_sent;
        s.bytes_sent = self.bytes_sent;
        s.timeouts = self.nofeedback_expiries;
        s.mode = if self.rate.is_some() {
            "rate"
        } else {
            "initial"
        };
        s
    }
}

impl Sender for RateSender {}
