//! An ImTCP-style inline estimator of available bandwidth `A` and capacity `P` (001 Sec. 2.2.2
//! uses ImTCP, Man, Hasegawa & Murata 2006), working only from the flow's own data segments and
//! the ACKs that come back: no extra packets are sent.
//!
//! The thesis says only that ImTCP paces the sender's own data packets and infers `A` from the
//! ACK arrival intervals, and that `P` comes from a companion capacity method (spec 001 §2.9).
//! The mechanism below follows that outline; its details are this implementation's own and are
//! documented as such:
//!
//! - **Probe streams.** A measurement sends [`ImtcpConfig::streams`] streams, at most one per
//!   sRTT. A stream is [`ImtcpConfig::stream_len`] consecutive new data segments held briefly
//!   between TCP and the wire (ImTCP's buffer) and released at one rate `r`. Stream `i` of a
//!   measurement probes the centre of the `i`-th equal sub-range of the search range
//!   `[lo, hi]`. Holding never delays a retransmission, and a stream that cannot gather its
//!   segments within [`ImtcpConfig::form_timeout`] is abandoned (the segments go out at once).
//! - **Increasing-delay detection.** The one-way delay of a segment is tracked by its ACK's
//!   arrival minus its release; the delay increases across the paced part of the stream exactly
//!   when its ACKs come back more spread out than the segments were sent, so the stream saw an
//!   increasing trend when `ack_span > send_span · (1 + trend_threshold)`: its rate exceeded
//!   `A` (the SLoPS idea). Through a busy FIFO that test fires at `r > A + threshold·P`, so
//!   the bias `threshold·P` is subtracted from the boundary found.
//! - **Losses.** A full DropTail queue admits only what it sends, so a stream through it keeps
//!   its spacing and the delay test is blind; a segment of the stream lost (its own ACK never
//!   arrives, the cumulative ACK jumps past it after the repair) counts as a trend, as in
//!   Pathload.
//! - **Result.** `A` lies between the highest probed rate without a trend and the lowest one
//!   with it; the midpoint is the measurement (the range's edge if every stream, or none, saw a
//!   trend). The estimate is the mean of the last [`ImtcpConfig::history`] measurements.
//! - **Search range update.** The next range is centred on that mean (on the measurement
//!   itself when it hit an edge, so the range moves towards `A`), half-width two standard
//!   deviations of the recent measurements but at least [`ImtcpConfig::min_width`] of `P`,
//!   clipped to `(0, P]`.
//! - **Capacity** from packet dispersion. The first two segments of every stream leave back to
//!   back; the bottleneck spaces them by its serialisation time, which the ACKs carry back. Of
//!   the last [`ImtcpConfig::capacity_window`] pairs the one with the smallest sum of the two
//!   segments' delays is the one least disturbed by queued cross traffic (the CapProbe rule),
//!   and its dispersion gives `P`. Before `P` is known streams are sent back to back.
//!
//! Rates here are whole packets on the wire per second (the segment plus its headers), the unit
//! of [`super::ptcp::PathEstimate`]. Nothing allocates after construction: streams, histories
//! and pair samples live in fixed arrays.

use std::collections::VecDeque;

use serde::Deserialize;

use super::path::PathEstimator;
use super::ptcp::PathEstimate;
use crate::packet::{Header, Packet};
use crate::time::{Dur, Time};

/// Most segments in one probe stream.
pub const MAX_STREAM_LEN: usize = 16;
/// Most streams per measurement.
pub const MAX_STREAMS: usize = 8;
/// Most measurements averaged, and pair samples kept.
pub const MAX_HISTORY: usize = 32;

/// The inline estimator's parameters. The thesis gives none (spec 001 §2.9); the defaults are
/// ImTCP-like: short streams of 5 segments over 4 sub-ranges, so a result every 4 RTTs.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImtcpConfig {
    /// Segments per probe stream (the first two are the capacity pair, sent back to back).
    pub stream_len: usize,
    /// Streams (sub-ranges of the search range) per measurement.
    pub streams: usize,
    /// Relative excess of the ACK span over the send span that counts as an increasing delay.
    pub trend_threshold: f64,
    /// Measurements averaged into the published `A` and used for the search range's width.
    pub history: usize,
    /// Smallest search range width as a fraction of `P`.
    pub min_width: f64,
    /// Pair samples over which the least-delayed one gives `P`.
    pub capacity_window: usize,
    /// Longest a stream may hold segments while gathering them.
    pub form_timeout: Dur,
}

impl Default for ImtcpConfig {
    fn default() -> Self {
        ImtcpConfig {
            stream_len: 5,                      // ImTCP-like short streams
            streams: 4,                         // 4 sub-ranges, one stream per RTT
            trend_threshold: 0.1,               // 10 % more spread: a queue built up
            history: 4,                         // about 16 RTTs of measurements
            min_width: 0.1,                     // 10 % of P
            capacity_window: 16,                // the last 16 pairs (16 RTTs)
            form_timeout: Dur::from_millis(10), // well under one RTT of the thesis' paths
        }
    }
}

impl ImtcpConfig {
    /// Checks every field; the message names the first bad one (`field: why`).
    pub fn validate(&self) -> Result<(), String> {
        if !(3..=MAX_STREAM_LEN).contains(&self.stream_len) {
            return Err(format!(
                "stream_len: must be in 3..={MAX_STREAM_LEN}, got {}",
                self.stream_len
            ));
        }
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return Err(format!(
                "streams: must be in 1..={MAX_STREAMS}, got {}",
                self.streams
            ));
        }
        if !(1..=MAX_HISTORY).contains(&self.history) {
            return Err(format!(
                "history: must be in 1..={MAX_HISTORY}, got {}",
                self.history
            ));
        }
        if !(1..=MAX_HISTORY).contains(&self.capacity_window) {
            return Err(format!(
                "capacity_window: must be in 1..={MAX_HISTORY}, got {}",
                self.capacity_window
            ));
        }
        if !(self.trend_threshold.is_finite() && self.trend_threshold >= 0.0) {
            return Err(format!(
                "trend_threshold: must be ≥ 0, got {}",
                self.trend_threshold
            ));
        }
        if !(self.min_width > 0.0 && self.min_width <= 1.0) {
            return Err(format!(
                "min_width: must lie in (0, 1], got {}",
                self.min_width
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// No stream until `next_at`.
    Idle { next_at: Time },
    /// Holding new segments until a stream's worth is queued.
    Forming { since: Time },
    /// Releasing the stream: segment `k` of it is due at `at`.
    Sending { k: usize, at: Time },
    /// All segments sent; waiting for their ACKs.
    Waiting,
}

/// A small ring of the last `cap` values.
#[derive(Clone, Copy, Debug)]
struct Ring<T: Copy> {
    buf: [T; MAX_HISTORY],
    len: usize,
    next: usize,
    cap: usize,
}

impl<T: Copy> Ring<T> {
    fn new(fill: T, cap: usize) -> Self {
        Ring {
            buf: [fill; MAX_HISTORY],
            len: 0,
            next: 0,
            cap: cap.clamp(1, MAX_HISTORY),
        }
    }
    fn push(&mut self, v: T) {
        self.buf[self.next] = v;
        self.next = (self.next + 1) % self.cap;
        self.len = (self.len + 1).min(self.cap);
    }
    fn items(&self) -> &[T] {
        &self.buf[..self.len]
    }
}

/// The estimator of one sender.
#[derive(Clone, Debug)]
pub struct Imtcp {
    cfg: ImtcpConfig,
    phase: Phase,
    srtt: Dur,
    /// Search range, pkt/s.
    lo: f64,
    hi: f64,
    /// The current stream's rate (pkt/s), `None` back to back.
    rate: Option<f64>,
    seqs: [u64; MAX_STREAM_LEN],
    rel: [Time; MAX_STREAM_LEN],
    acked: [Option<Time>; MAX_STREAM_LEN],
    /// Stream index inside the measurement, with each stream's rate and trend.
    stream: usize,
    rates: [f64; MAX_STREAMS],
    trend: [bool; MAX_STREAMS],
    history: Ring<f64>,
    /// (delay sum in seconds, pair rate in pkt/s).
    pairs: Ring<(f64, f64)>,
    available: Option<f64>,
    capacity: Option<f64>,
    measurements: u64,
    streams_abandoned: u64,
}

impl Imtcp {
    /// A fresh estimator; out-of-range sizes are clamped (see [`ImtcpConfig::validate`]).
    pub fn new(cfg: ImtcpConfig) -> Imtcp {
        let mut cfg = cfg;
        cfg.stream_len = cfg.stream_len.clamp(3, MAX_STREAM_LEN);
        cfg.streams = cfg.streams.clamp(1, MAX_STREAMS);
        Imtcp {
            phase: Phase::Idle {
                next_at: Time::ZERO,
            },
            srtt: Dur::from_millis(100),
            lo: 0.0,
            hi: 0.0,
            rate: None,
            seqs: [0; MAX_STREAM_LEN],
            rel: [Time::ZERO; MAX_STREAM_LEN],
            acked: [None; MAX_STREAM_LEN],
            stream: 0,
            rates: [0.0; MAX_STREAMS],
            trend: [false; MAX_STREAMS],
            history: Ring::new(0.0, cfg.history),
            pairs: Ring::new((0.0, 0.0), cfg.capacity_window),
            available: None,
            capacity: None,
            measurements: 0,
            streams_abandoned: 0,
            cfg,
        }
    }

    /// Completed measurements of `A`.
    pub fn measurements(&self) -> u64 {
        self.measurements
    }
    /// Streams given up (not formed in time, a loss or a retransmission inside them).
    pub fn streams_abandoned(&self) -> u64 {
        self.streams_abandoned
    }
    /// The current search range, pkt/s.
    pub fn search_range(&self) -> (f64, f64) {
        (self.lo, self.hi)
    }

    fn new_data(p: &Packet) -> Option<u64> {
        match p.header {
            Header::TcpData(d) if !d.retransmit && d.payload > 0 => Some(d.seq),
            _ => None,
        }
    }

    fn abandon(&mut self, now: Time) {
        self.streams_abandoned += 1;
        self.phase = Phase::Idle {
            next_at: now + self.srtt,
        };
    }

    /// The sender's next packet from its queue `out`, pacing probe streams: `None` holds the
    /// queue until [`Imtcp::next_release`].
    pub fn poll(&mut self, now: Time, out: &mut VecDeque<Packet>) -> Option<Packet> {
        let front = *out.front()?;
        if Self::new_data(&front).is_none() {
            // Retransmissions (and the SYN) never wait; one inside a stream spoils it.
            if matches!(self.phase, Phase::Sending { .. }) {
                self.abandon(now);
            }
            return out.pop_front();
        }
        loop {
            match self.phase {
                Phase::Idle { next_at } => {
                    if now < next_at {
                        return out.pop_front();
                    }
                    self.phase = Phase::Forming { since: now };
                }
                Phase::Forming { since } => {
                    let ready = out
                        .iter()
                        .take(self.cfg.stream_len)
                        .filter(|p| Self::new_data(p).is_some())
                        .count();
                    if ready >= self.cfg.stream_len {
                        self.begin_stream();
                        self.phase = Phase::Sending { k: 0, at: now };
                    } else if now >= since + self.cfg.form_timeout {
                        self.abandon(now);
                        return out.pop_front();
                    } else {
                        return None;
                    }
                }
                Phase::Sending { k, at } => {
                    if now < at {
                        return None;
                    }
                    let p = out.pop_front()?;
                    let seq = Self::new_data(&p).unwrap_or(0);
                    if k > 0 && seq != self.seqs[k - 1] + 1 {
                        self.abandon(now);
                        return Some(p);
                    }
                    self.seqs[k] = seq;
                    self.rel[k] = now;
                    self.acked[k] = None;
                    let k = k + 1;
                    self.phase = if k == self.cfg.stream_len {
                        Phase::Waiting
                    } else {
                        // Segments 0 and 1 are the back-to-back capacity pair.
                        let gap = match self.rate {
                            Some(r) if k >= 2 && r > 0.0 => Dur::from_secs_f64(1.0 / r),
                            _ => Dur::ZERO,
                        };
                        Phase::Sending { k, at: now + gap }
                    };
                    return Some(p);
                }
                Phase::Waiting => return out.pop_front(),
            }
        }
    }

    /// When a held queue must be polled again.
    pub fn next_release(&self) -> Option<Time> {
        match self.phase {
            Phase::Forming { since } => Some(since + self.cfg.form_timeout),
            Phase::Sending { at, .. } => Some(at),
            _ => None,
        }
    }

    /// The sender timed out: release everything, forget the stream.
    pub fn on_timeout(&mut self, now: Time) {
        if !matches!(self.phase, Phase::Idle { .. }) {
            self.abandon(now);
        }
    }

    fn begin_stream(&mut self) {
        if self.stream == 0 {
            // A new measurement over the current search range.
            if let Some(p) = self.capacity {
                if self.hi <= 0.0 {
                    self.lo = p * self.cfg.min_width;
                    self.hi = p;
                }
            }
        }
        self.rate = self.capacity.map(|_| {
            let w = (self.hi - self.lo) / self.cfg.streams as f64;
            self.lo + w * (self.stream as f64 + 0.5)
        });
    }

    /// An ACK for everything below `ack` (the next segment expected) arrived at `now`;
    /// `srtt` is the sender's smoothed RTT.
    pub fn on_ack(&mut self, now: Time, ack: u64, srtt: Option<Dur>) {
        if let Some(s) = srtt.filter(|s| !s.is_zero()) {
            self.srtt = s;
        }
        let sent = match self.phase {
            Phase::Sending { k, .. } => k,
            Phase::Waiting => self.cfg.stream_len,
            _ => return,
        };
        for j in 0..sent {
            if self.acked[j].is_some() {
                continue;
            }
            if ack == self.seqs[j] + 1 {
                self.acked[j] = Some(now);
            } else if ack > self.seqs[j] + 1 {
                // The segment's own ACK never came: it was lost and repaired (or its ACK was).
                self.lossy_stream(now);
                return;
            }
            break;
        }
        if self.phase == Phase::Waiting && self.acked[self.cfg.stream_len - 1].is_some() {
            self.finish_stream();
            self.phase = Phase::Idle {
                next_at: self.rel[0] + self.srtt,
            };
        } else if now.saturating_since(self.rel[0]) > self.srtt.saturating_mul(4) {
            self.abandon(now);
        }
    }

    /// A segment of the stream was lost. Through a full DropTail queue a stream keeps its
    /// spacing (the queue admits only what leaves), so the delay test cannot fire there; a loss
    /// inside the stream is then the sign that its rate exceeded `A`, as Pathload reads it. A
    /// back-to-back stream (no rate yet) is simply abandoned.
    fn lossy_stream(&mut self, now: Time) {
        match (self.rate, matches!(self.phase, Phase::Waiting)) {
            (Some(rate), true) => {
                self.rates[self.stream] = rate;
                self.trend[self.stream] = true;
                self.stream += 1;
                if self.stream == self.cfg.streams {
                    self.stream = 0;
                    self.conclude();
                }
                self.phase = Phase::Idle {
                    next_at: self.rel[0] + self.srtt,
                };
            }
            _ => self.abandon(now),
        }
    }

    fn finish_stream(&mut self) {
        let n = self.cfg.stream_len;
        let t = |x: Option<Time>| x.unwrap_or(Time::ZERO);
        let (a0, a1) = (t(self.acked[0]), t(self.acked[1]));
        let gap = a1.saturating_since(a0).as_secs_f64();
        if gap > 0.0 {
            let delays = a0.saturating_since(self.rel[0]).as_secs_f64()
                + a1.saturating_since(self.rel[1]).as_secs_f64();
            self.pairs.push((delays, 1.0 / gap));
            self.capacity = self
                .pairs
                .items()
                .iter()
                .min_by(|x, y| x.0.total_cmp(&y.0))
                .map(|x| x.1);
        }
        let Some(rate) = self.rate else {
            return; // a back-to-back stream only measured the pair
        };
        let send_span = self.rel[n - 1].saturating_since(self.rel[1]).as_secs_f64();
        let ack_span = t(self.acked[n - 1])
            .saturating_since(t(self.acked[1]))
            .as_secs_f64();
        self.rates[self.stream] = rate;
        self.trend[self.stream] = ack_span > send_span * (1.0 + self.cfg.trend_threshold);
        self.stream += 1;
        if self.stream == self.cfg.streams {
            self.stream = 0;
            self.conclude();
        }
    }

    /// One measurement: `A` from the streams' trends, then the search range update.
    fn conclude(&mut self) {
        let m = self.cfg.streams;
        let first = (0..m).find(|&i| self.trend[i]);
        // A stream through a busy FIFO of capacity P comes out at P·r/(r + X) for cross
        // traffic X, so the spread test fires once r > A + threshold·P: the boundary it finds
        // sits threshold·P above A, and that bias is taken off (not at the top edge, where no
        // stream fired).
        let bias = self.cfg.trend_threshold * self.capacity.unwrap_or(0.0);
        let (value, edge) = match first {
            None => (self.hi, true),
            Some(0) => ((self.lo - bias).max(0.0), true),
            Some(i) => (
                ((self.rates[i - 1] + self.rates[i]) / 2.0 - bias).max(0.0),
                false,
            ),
        };
        self.history.push(value);
        self.measurements += 1;
        let h = self.history.items();
        let mean = h.iter().sum::<f64>() / h.len() as f64;
        let var = h.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / h.len() as f64;
        self.available = Some(mean);
        let p = self.capacity.unwrap_or(self.hi);
        let centre = if edge { value } else { mean };
        let half = (2.0 * var.sqrt()).max(self.cfg.min_width * p / 2.0);
        self.lo = (centre - half).max(self.cfg.min_width * p / 2.0);
        self.hi = (centre + half)
            .min(p)
            .max(self.lo + self.cfg.min_width * p / 2.0);
    }
}

impl PathEstimator for Imtcp {
    fn estimate(&self) -> Option<PathEstimate> {
        let capacity = self.capacity?;
        Some(PathEstimate {
            available: self.available?.min(capacity),
            capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::wire::TcpData;

    fn seg(seq: u64) -> Packet {
        Packet {
            size: 1040,
            header: Header::TcpData(TcpData {
                seq,
                ts: Time::ZERO,
                payload: 1000,
                retransmit: false,
            }),
        }
    }

    /// Drives the estimator by hand over a fluid bottleneck of `cap` pkt/s that carries `cross`
    /// pkt/s of other traffic: each released segment adds `1/cap` s of work to the backlog,
    /// which drains at `1 − cross/cap` s per s; its ACK returns `base` s after it departs.
    fn run(cap: f64, cross: f64, secs: f64) -> Imtcp {
        let mut est = Imtcp::new(ImtcpConfig::default());
        let base = 0.02;
        let own = 1000.0; // the flow's own segments per second
        let mut out = VecDeque::new();
        let (mut seq, mut next_own) = (0u64, 0.0f64);
        let (mut backlog, mut last) = (0.0f64, 0.0f64); // seconds of work queued, fluid
        let mut acks: VecDeque<(f64, u64)> = VecDeque::new();
        let mut t = 0.0;
        while t < secs {
            let now = Time::from_secs_f64(t);
            while acks.front().is_some_and(|a| a.0 <= t) {
                let (_, a) = acks.pop_front().unwrap();
                est.on_ack(now, a, Some(Dur::from_millis(25)));
            }
            if t >= next_own {
                out.push_back(seg(seq));
                seq += 1;
                next_own += 1.0 / own;
            }
            while let Some(p) = est.poll(now, &mut out) {
                let Header::TcpData(d) = p.header else {
                    unreachable!()
                };
                backlog = (backlog - (t - last) * (1.0 - cross / cap)).max(0.0);
                last = t;
                backlog += 1.0 / cap;
                acks.push_back((t + backlog + base, d.seq + 1));
            }
            // Departures are FIFO, so ACKs come back in order; step to the next event.
            let mut next = next_own;
            if let Some(a) = acks.front() {
                next = next.min(a.0);
            }
            if let Some(r) = est.next_release() {
                next = next.min(r.as_secs_f64());
            }
            t = next.max(t + 1e-9);
        }
        est
    }

    #[test]
    fn finds_capacity_and_available_bandwidth_on_a_fluid_bottleneck() {
        // 12 000 pkt/s (100 Mb/s of 1040 B) with 0 to 9 000 pkt/s of cross traffic.
        for cross in [0.0, 3_000.0, 6_000.0, 9_000.0] {
            let est = run(12_000.0, cross, 3.0);
            let e = est.estimate().expect("an estimate after 3 s");
            let want = 12_000.0 - cross;
            let err = (e.available - want).abs() / want;
            eprintln!(
                "cross {cross}: P = {:.0}, A = {:.0} (true {want}, error {:.1} %), {} measurements",
                e.capacity,
                e.available,
                err * 100.0,
                est.measurements()
            );
            assert!(
                (e.capacity - 12_000.0).abs() / 12_000.0 < 0.01,
                "P = {}",
                e.capacity
            );
            assert!(est.measurements() >= 5);
            assert!(err < 0.2, "A = {} against {want}", e.available);
        }
    }

    #[test]
    fn retransmissions_bypass_a_forming_stream() {
        let mut est = Imtcp::new(ImtcpConfig::default());
        let mut out = VecDeque::new();
        out.push_back(seg(1));
        out.push_back(seg(2));
        // Forming: two of five segments, held.
        assert!(est.poll(Time::ZERO, &mut out).is_none());
        let mut r = seg(0);
        if let Header::TcpData(ref mut d) = r.header {
            d.retransmit = true;
        }
        out.push_front(r);
        let p = est.poll(Time(1), &mut out).unwrap();
        assert!(matches!(p.header, Header::TcpData(d) if d.retransmit));
        // Not formed in time: released.
        let t = Time::ZERO + ImtcpConfig::default().form_timeout;
        assert_eq!(est.next_release(), Some(t));
        assert!(est.poll(t, &mut out).is_some());
        assert_eq!(est.streams_abandoned(), 1);
    }
}
