//! The TFWC sender (002 Ch. 3): Ack-clocked, window from the equation, loss history at the
//! sender, hybrid rate mode below two packets, cwnd jitter, no retransmissions.

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::ack_vector::{AckVector, Coverage};
use super::config::{
    FirstLossSeed, HistoryWeights, JitterRule, Rounding, RttEstimator, StallLosses, TailPacket,
    TfwcConfig,
};
use crate::endpoint::{Endpoint, Sender, Stats};
use crate::equation::{Equation, TimeoutTerm};
use crate::loss_events::LossEventGrouper;
use crate::loss_history::{AliConfig, LossEstimator, LossHistory, PacketOutcome, Weights};
use crate::packet::{Header, Packet};
use crate::rtt::{TcpRtt, TcpRttConfig, TcpRttMode, TfrcRtt, TfrcRttConfig};
use crate::time::{Dur, Time};

/// Which regime the sender is in (for stats and plots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Before the first loss: +1 packet per ACK (002 Sec. 3.3.1).
    SlowStart,
    /// `cwnd = 1/f(p)`, Ack-clocked (002 Sec. 3.2.4).
    Window,
    /// Below [`TfwcConfig::rate_threshold`]: one packet per equation interval (002 Sec. 3.3.2).
    Rate,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::SlowStart => "slowstart",
            Mode::Window => "window",
            Mode::Rate => "rate",
        }
    }
}

/// Jitter bookkeeping for one RTT (002 Sec. 3.3.3).
#[derive(Clone, Debug)]
struct JitterRound {
    start: Time,
    inflated: bool,
    ali_first: Option<f64>,
    /// [`JitterRule::Ns2`]: Ack Vectors of this RTT that drew no inflation.
    as_is: u32,
    /// [`JitterRule::Ns2`]: the ALI when the span since the last forced inflation began, the
    /// latest ALI, and the Ack Vectors in the span (ns-2's `alivec_[0]`,
    /// `alivec_[numalivec_ − 1]`, `numalivec_`).
    span_first: Option<f64>,
    span_last: f64,
    span_len: u32,
}

/// Choi's ns-2.34 RTT estimator ([`RttEstimator::Ns2`]) in seconds.
#[derive(Clone, Copy, Debug)]
struct Ns2Rtt {
    /// [`TfwcConfig::rtt_gain`], `1 − df`.
    gain: f64,
    srtt: Option<f64>,
    rttvar: f64,
}

impl Ns2Rtt {
    fn new(gain: f64) -> Self {
        Ns2Rtt {
            gain,
            srtt: None,
            rttvar: 0.0,
        }
    }

    fn on_sample(&mut self, r: f64) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                let s = (1.0 - self.gain) * s + self.gain * r;
                self.srtt = Some(s);
                self.rttvar += 0.25 * ((s - r).abs() - self.rttvar);
            }
        }
    }

    /// `SRTT + max(g, 4·RTTVAR)` with ns-2's `g_ = 0.01` s.
    fn rto(&self) -> Option<f64> {
        self.srtt.map(|s| s + (4.0 * self.rttvar).max(0.01))
    }
}

/// TFWC sender: at most [`TfwcSender::cwnd`] packets beyond the highest number the receiver
/// reported may be outstanding (002 Eq. 3.6), plus those the timer lets out in rate mode.
///
/// Feed it every Ack Vector ([`Header::TfwcAck`]) with [`Endpoint::on_packet`] and poll
/// [`Endpoint::poll_transmit`] after each one and at [`Endpoint::next_timeout`]. Packets are
/// never retransmitted; [`Sender::offer`] limits the data an application has (`None`, the
/// default, is a bulk source): each packet then carries up to `packet_size - header_size` of
/// the offered bytes, the buffer's tail in a short packet whose [`Packet::size`] is the header
/// and the rest ([`TfwcConfig::tail_packet`]), and none leaves while the buffer is empty.
#[derive(Clone, Debug)]
pub struct TfwcSender {
    cfg: TfwcConfig,
    eq: Equation,
    mode: Mode,
    /// Next sequence number to send.
    next_seq: u64,
    /// Lowest number not yet judged received or lost; also one above the AoA.
    next_judge: u64,
    /// Send times of `next_judge..next_seq`, each with the stall it was sent in (the arrival
    /// time of the last Ack Vector before the stall; [`StallLosses`]).
    sent: VecDeque<(Time, Option<Time>)>,
    /// Highest number the receiver reported, the "unacked seqno" of Eq. 3.6 (ns-2's `last_ack`).
    head: Option<u64>,
    /// Packets the timer let out beyond the window since the last ACK (Algorithm 1, line 8).
    timer_credit: u64,
    /// Window in whole packets, jitter included.
    cwnd: u64,
    /// `1/f(p)` before rounding.
    window_exact: f64,
    history: LossHistory,
    grouper: LossEventGrouper,
    /// [`RttEstimator::Rfc6298`]: SRTT and the window-mode RTO. Under [`RttEstimator::Ns2`]
    /// only the rate mode's `t0` (ns-2 TCP's estimator on 0.1 s ticks).
    rtt: TcpRtt,
    /// [`RttEstimator::Ns2`]: SRTT and the window-mode RTO.
    ns2_rtt: Option<Ns2Rtt>,
    /// [`RttEstimator::Ns2`]: the back-off multiplier of the window-mode RTO.
    ns2_backoff: f64,
    /// The latest sample and the sqrt-RTT mean for the rate-mode interval (spec 002 §2.8 [X]).
    delay: TfrcRtt,
    /// Send clock in rate mode, retransmission-style timer in window mode.
    deadline: Option<Time>,
    /// Arrival time of the latest Ack Vector that was not stale.
    last_feedback: Time,
    /// From a window-mode expiry, or in rate mode from the first send after the no-feedback
    /// interval ([`Self::rate_mode_stalled`]), to the next Ack Vector: [`Self::last_feedback`]
    /// when the stall began ([`StallLosses`]).
    stall: Option<Time>,
    /// The window-mode timer after an expiry without doubling (`timer_backoff = false`):
    /// `2·SRTT` until the next Ack Vector, as Choi's ns-2.34 `backoff_timer()` leaves `rto_`.
    rto_after_expiry: Option<Dur>,
    /// Time of the latest transmission (ns-2's `timevec_` entry that marks RTTs for the jitter).
    last_send: Time,
    /// Rate mode: packets the timer has released and `poll_transmit` has not yet sent.
    released: u32,
    jitter: JitterRound,
    rng: Pcg64Mcg,
    /// Bytes the application still has to send; `None` is a bulk source. Each packet takes
    /// `packet_size - header_size` of them, or the rest.
    backlog: Option<u64>,
    stats: Stats,
    /// [`Self::count_loss_events_from`]: loss events whose first lost packet was sent at or
    /// after this time.
    events_from: Time,
    events_since: u64,
    unknown: u64,
    stale_acks: u64,
}

impl TfwcSender {
    /// A sender whose first packet may leave at `now`. The configuration is assumed validated
    /// ([`TfwcConfig::validate`]); out-of-range values are clamped, not trusted.
    pub fn new(cfg: TfwcConfig, now: Time) -> TfwcSender {
        let ali = AliConfig {
            n: cfg.history_size.clamp(1, crate::loss_history::MAX_HISTORY),
            weights: match cfg.history_weights {
                HistoryWeights::Tfrc => Weights::Rfc5348,
                HistoryWeights::Choi => Weights::Choi,
            },
            ..AliConfig::tfwc()
        };
        let history = LossHistory::new(ali)
            .unwrap_or_else(|_| LossHistory::new(AliConfig::tfwc()).expect("preset is valid"));
        let rtt = match cfg.rtt_estimator {
            RttEstimator::Rfc6298 => TcpRtt::new(TcpRttConfig {
                mode: TcpRttMode::Rfc6298,
                tick: Dur::from_millis(10),
                min_rto: cfg.min_rto,
                max_rto: cfg.max_rto,
                initial_rto: cfg.initial_rto,
                ..TcpRttConfig::default()
            }),
            // ns-2.34 `t0_`: `tcp_tick_` (`t0_tick`), `minrto_ = 0`, 6 s before the first sample.
            RttEstimator::Ns2 => TcpRtt::new(TcpRttConfig {
                mode: TcpRttMode::Ns2,
                tick: cfg.t0_tick,
                min_rto: Dur::ZERO,
                max_rto: cfg.max_rto,
                initial_rto: Dur::from_secs(6),
                ..TcpRttConfig::default()
            }),
        };
        let ns2_rtt = (cfg.rtt_estimator == RttEstimator::Ns2).then(|| Ns2Rtt::new(cfg.rtt_gain));
        TfwcSender {
            eq: Equation::pftk(),
            mode: Mode::SlowStart,
            next_seq: 0,
            next_judge: 0,
            sent: VecDeque::new(),
            head: None,
            timer_credit: 0,
            cwnd: u64::from(cfg.initial_window.max(1)),
            window_exact: f64::from(cfg.initial_window.max(1)),
            history,
            grouper: LossEventGrouper::new(),
            rtt,
            ns2_rtt,
            ns2_backoff: 1.0,
            delay: TfrcRtt::new(TfrcRttConfig {
                beta: cfg.rtt_gain,
                min_sample: cfg.min_rtt_sample,
            }),
            deadline: None,
            last_feedback: now,
            stall: None,
            rto_after_expiry: None,
            last_send: now,
            released: 0,
            jitter: JitterRound {
                start: now,
                inflated: false,
                ali_first: None,
                as_is: 0,
                span_first: None,
                span_last: 0.0,
                span_len: 0,
            },
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            backlog: None,
            stats: Stats::default(),
            events_from: Time::ZERO,
            events_since: 0,
            unknown: 0,
            stale_acks: 0,
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TfwcConfig {
        &self.cfg
    }

    /// Application bytes waiting in the send buffer (offered and not yet sent); `None` for a
    /// bulk source. A media application reads its send-buffer length here (002 Sec. 6.2's
    /// `get_sbuf_len()`).
    pub fn buffered(&self) -> Option<u64> {
        self.backlog
    }

    /// Application bytes sent: [`Stats::bytes_sent`] less the `header_size` of each packet
    /// (`Stats::bytes_sent` counts whole packets, as the link carries them). What a media
    /// application set against the bytes it offered: with [`TfwcConfig::tail_packet`] `short`,
    /// offered = this + [`Self::buffered`].
    pub fn payload_sent(&self) -> u64 {
        let header = u64::from(self.cfg.header_size) * self.stats.packets_sent;
        self.stats.bytes_sent.saturating_sub(header)
    }

    /// Slow start, window or rate mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The window in packets, jitter included.
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// `1/f(p)` before rounding (or the slow-start window).
    pub fn window_exact(&self) -> f64 {
        self.window_exact
    }

    /// The sender's loss history (002 Sec. 3.2.2).
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    /// Numbers the Ack Vector no longer covered when they were judged (counted as received).
    pub fn unknown(&self) -> u64 {
        self.unknown
    }

    fn window_of(&self, w: f64) -> u64 {
        let whole = match self.cfg.rounding {
            Rounding::Nearest => (w + 0.5).floor(),
            Rounding::Floor => w.floor(),
        };
        (whole.max(f64::from(self.cfg.min_window)) as u64).min(u64::from(self.cfg.max_window))
    }

    /// Whether a rate-mode send at `now` is one of a stall: no Ack Vector for longer than
    /// RFC 5348's no-feedback interval, `max(4·R, 2·s/X)` (Sec. 4.3 step 4; `s/X` is the
    /// rate-mode interval). The rate mode is "TFRC-like, but sender-based" (002 Sec. 3.3.2)
    /// and its timer is a send clock that never expires for want of feedback (spec 002 §2.8:
    /// no back-off), so this interval stands for the window mode's expiry in
    /// [`StallLosses::OneEvent`]. Judged one loss event per SRTT of send time, the packets a
    /// rate-mode flow sent into a 9 s outage took `p` from 0.16 to 0.5 (docs/reproductions/
    /// log/tfwc.md, "Outages that begin in rate mode").
    fn rate_mode_stalled(&self, now: Time) -> bool {
        let quiet = now.saturating_since(self.last_feedback);
        let r = self.srtt().unwrap_or(self.cfg.initial_rto);
        quiet > r.saturating_mul(4) && quiet > self.rate_interval().saturating_mul(2)
    }

    /// The window-mode timer: the RTO (backed off if [`TfwcConfig::timer_backoff`]), or
    /// `2·SRTT` after an expiry under ns-2.34's rule until the next Ack Vector.
    fn window_rto(&self) -> Dur {
        self.rto_after_expiry.unwrap_or_else(|| self.rto())
    }

    /// The smoothed RTT of [`TfwcConfig::rtt_estimator`].
    fn srtt(&self) -> Option<Dur> {
        match &self.ns2_rtt {
            Some(e) => e.srtt.map(Dur::from_secs_f64),
            None => self.rtt.srtt(),
        }
    }

    /// The window-mode RTO, backed off, within `min_rto..=max_rto`.
    fn rto(&self) -> Dur {
        match &self.ns2_rtt {
            Some(e) => {
                let base = e.rto().unwrap_or(self.cfg.initial_rto.as_secs_f64());
                let (lo, hi) = (
                    self.cfg.min_rto.as_secs_f64(),
                    self.cfg.max_rto.as_secs_f64(),
                );
                Dur::from_secs_f64((base.max(lo) * self.ns2_backoff).min(hi))
            }
            None => self.rtt.rto(),
        }
    }

    /// The first loss ends slow start (002 Algorithm 2): halve the window and seed the history
    /// with the interval whose equation window is the halved one, as
    /// [`TfwcConfig::first_loss_seed`] reads Algorithm 2.
    fn first_loss(&mut self, sent_at: Time) {
        self.cwnd = (self.cwnd / 2).max(1);
        let interval = seed_interval(&self.eq, self.cwnd as f64, self.cfg.first_loss_seed);
        self.grouper.force_new_event(sent_at);
        self.history.on_loss_event();
        self.history.seed(interval);
        self.mode = Mode::Window;
        self.stats.loss_events += 1;
        if sent_at >= self.events_from {
            self.events_since += 1;
        }
    }

    fn judge(&mut self, v: &AckVector) {
        let srtt = self.srtt().unwrap_or(Dur::ZERO);
        while self.next_judge.saturating_add(self.cfg.margin) < v.head {
            let seq = self.next_judge;
            let (sent_at, stall) = self.sent.pop_front().unwrap_or((Time::ZERO, None));
            self.next_judge += 1;
            let lost = match v.coverage(seq) {
                Coverage::Received => false,
                Coverage::NotReceived => true,
                Coverage::Unknown => {
                    self.unknown += 1;
                    false
                }
            };
            if self.mode == Mode::SlowStart {
                if lost {
                    self.first_loss(sent_at);
                }
                continue;
            }
            // The expiries of one stall (002 Sec. 3.2.5, Algorithm 1) are one TCP timeout
            // sequence, one loss indication of the equation's model ([`StallLosses`]).
            let outcome = match stall {
                Some(horizon)
                    if lost
                        && self.cfg.stall_losses == StallLosses::OneEvent
                        && self.grouper.event_start().is_some_and(|s| s >= horizon) =>
                {
                    PacketOutcome::Lost
                }
                _ => self.grouper.classify(sent_at, lost, srtt),
            };
            if outcome == PacketOutcome::NewLossEvent {
                self.stats.loss_events += 1;
                if sent_at >= self.events_from {
                    self.events_since += 1;
                }
            }
            self.history.on_packet(outcome);
        }
    }

    /// The Ack-clocked window update of 002 Sec. 3.2.4 with the rebuilt Algorithm 3 and the
    /// jitter of Sec. 3.3.3.
    fn update_window(&mut self, now: Time) {
        if self.mode == Mode::SlowStart {
            self.cwnd = (self.cwnd + 1).min(u64::from(self.cfg.max_window));
            self.window_exact = self.cwnd as f64;
            return;
        }
        let Some(p) = self.history.loss_event_rate() else {
            return;
        };
        let w = self.eq.window(p);
        self.window_exact = w;
        self.mode = if self.cfg.hybrid && w < self.cfg.rate_threshold {
            Mode::Rate
        } else {
            Mode::Window
        };
        let previous = self.cwnd;
        self.cwnd = self.window_of(w);
        if self.cfg.jitter {
            match self.cfg.jitter_rule {
                JitterRule::Thesis if self.mode == Mode::Window => self.jitter(now, p),
                JitterRule::Thesis => {}
                JitterRule::Ns2 => self.jitter_ns2(p, previous),
            }
        }
    }

    /// A uniform draw in [0, 1).
    fn draw(&mut self) -> f64 {
        crate::uniform::unit(&mut self.rng)
    }

    /// [`JitterRule::Ns2`]: Choi's ns-2.34 `smoother()` and `force_inflate()`, as described on
    /// the rule. It runs on every Ack Vector after slow start, as there (in rate mode the
    /// window is not used).
    fn jitter_ns2(&mut self, p: f64, previous: u64) {
        let ali = 1.0 / p;
        let srtt = self.srtt().unwrap_or(Dur::MAX);
        let acks = u32::from(self.jitter.inflated) + self.jitter.as_is;
        let new_rtt = acks > 0 && self.last_send.saturating_since(self.jitter.start) > srtt;
        if new_rtt {
            // The window is the previous one, not this Ack Vector's equation value.
            self.cwnd = previous;
            let moved = self.jitter.span_first.is_some_and(|f| {
                (f - self.jitter.span_last).abs() > self.cfg.jitter_max_ali_change
            });
            let go = self.jitter.span_len > 4 && moved;
            if go {
                self.jitter.span_len = 1;
                self.jitter.span_first = None;
            } else {
                self.jitter.span_len += 1;
            }
            // One inflation among at least 5 Ack Vectors stays below ns-2's 25 % ratio.
            if go && self.cfg.jitter_force && !self.jitter.inflated && self.jitter.as_is >= 4 {
                self.cwnd += 1;
            }
            self.jitter.start = self.last_send;
            self.jitter.inflated = false;
            self.jitter.as_is = 0;
        } else {
            if self.draw() < self.cfg.jitter_probability {
                self.cwnd += 1;
                self.jitter.inflated = true;
            } else {
                self.jitter.as_is += 1;
            }
            self.jitter.span_len += 1;
        }
        self.jitter.span_first.get_or_insert(ali);
        self.jitter.span_last = ali;
    }

    fn jitter(&mut self, now: Time, p: f64) {
        let ali = 1.0 / p;
        let first = *self.jitter.ali_first.get_or_insert(ali);
        let allowed =
            p <= self.cfg.jitter_max_p && (ali - first).abs() <= self.cfg.jitter_max_ali_change;
        let draw = self.draw();
        if allowed && draw < self.cfg.jitter_probability {
            self.cwnd += 1;
            self.jitter.inflated = true;
        }
        let srtt = self.srtt().unwrap_or(Dur::MAX);
        if now.saturating_since(self.jitter.start) > srtt {
            // The "force inflater" at the end of each RTT (002 Sec. 3.3.3).
            if allowed && self.cfg.jitter_force && !self.jitter.inflated {
                self.cwnd += 1;
            }
            self.jitter.start = now;
            self.jitter.inflated = false;
            self.jitter.ali_first = Some(ali);
        }
    }

    /// Footnote 6 of 002: the equation interval `s/X(p, R, t0)` at the latest RTT sample (the
    /// timeout term capped as PFTK's `min(1, ·)` when [`TfwcConfig::rate_mode_pftk_min`] is on),
    /// scaled by `sqrt(R)/M` when [`TfwcConfig::rate_mode_delay_scaling`] is on (Choi's code,
    /// spec 002 §2.8 [X]; off in the thesis preset, whose footnote 6 prints no such factor)
    /// and by [`TfwcConfig::rate_mode_scale`].
    fn rate_interval(&self) -> Dur {
        let p = self.history.loss_event_rate().unwrap_or(1.0);
        let r = self
            .delay
            .latest()
            .or(self.srtt())
            .unwrap_or(self.cfg.initial_rto)
            .as_secs_f64();
        let t0 = self.rtt.base_rto().as_secs_f64();
        let s = f64::from(self.cfg.packet_size);
        let eq = if self.cfg.rate_mode_pftk_min {
            Equation {
                timeout_term: TimeoutTerm::PftkMin,
                ..self.eq
            }
        } else {
            self.eq
        };
        let x = eq.rate_with_rto(s, r, t0, p);
        if x.is_nan() || x <= 0.0 {
            return self.cfg.max_rto;
        }
        let delay = if self.cfg.rate_mode_delay_scaling {
            self.delay.ism_factor()
        } else {
            1.0
        };
        let ipi = s / x * delay * self.cfg.rate_mode_scale;
        Dur::from_secs_f64(ipi).min(self.cfg.max_rto)
    }

    fn has_data(&self) -> bool {
        self.backlog.map_or(true, |b| b > 0)
    }

    /// Eq. 3.6: a new packet may leave while `seqno ≤ unacked + cwnd`.
    fn window_open(&self) -> bool {
        let base = self.head.map_or(0, |h| h + 1);
        self.next_seq < base + self.cwnd + self.timer_credit
    }
}

/// The loss interval Algorithm 2 (002 Sec. 3.3.1) seeds for a halved window `w`.
pub(crate) fn seed_interval(eq: &Equation, w: f64, how: FirstLossSeed) -> f64 {
    /// Algorithm 2's step ("increment step size = .00001").
    const STEP: f64 = 1e-5;
    let exact = eq.loss_for_window(w);
    if how == FirstLossSeed::Exact {
        return 1.0 / exact;
    }
    // The first grid point whose window is below `w`: start at the exact inverse's cell and
    // move to the boundary (a step or two either way absorbs the inverse's rounding).
    let last = (1.0 / STEP).round() as u64;
    let mut k = ((exact / STEP).floor() as u64).clamp(1, last);
    while k > 1 && eq.window((k - 1) as f64 * STEP) < w {
        k -= 1;
    }
    while k < last && eq.window(k as f64 * STEP) >= w {
        k += 1;
    }
    // 1/p as 10⁵/k: exact where k divides 10⁵ (1/(1·10⁻⁵) in floating point is 99 999.99...).
    let interval = last as f64 / k as f64;
    match how {
        FirstLossSeed::GridTruncated => interval.trunc().max(1.0),
        _ => interval,
    }
}

impl Endpoint for TfwcSender {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        let Header::TfwcAck { vector, echo } = pkt.header else {
            return;
        };
        if self.head.is_some_and(|h| vector.head <= h) || vector.head >= self.next_seq {
            // Reordered or duplicated Ack Vector: it neither judges nor measures (002
            // Sec. 5.1.4: reordered packets do not update the RTT). A head we never sent is
            // forged or corrupt.
            self.stale_acks += 1;
            return;
        }
        // Floored at `min_rtt_sample` so no estimator ever holds a zero RTT.
        let sample = now.saturating_since(echo).max(self.delay.min_sample());
        self.rtt.on_sample(sample);
        self.rtt.reset_backoff();
        if let Some(e) = &mut self.ns2_rtt {
            e.on_sample(sample.as_secs_f64());
        }
        self.ns2_backoff = 1.0;
        self.rto_after_expiry = None;
        self.last_feedback = now;
        self.stall = None;
        self.delay.on_sample(sample);
        // Algorithm 1 line 8 moves the unacked seqno of Eq. 3.6 up by one per expiry, past
        // the packets the timer let out; an Ack Vector moves it further only where its head
        // lies above that, as a highest-number-received never falls (002 is silent; TCP's
        // snd_una never moves back either). Zeroing the credit on any Ack Vector let the Ack
        // Vectors of two packets a link held through a 9 s outage close the window on the 42
        // lost ones the expiries had sent: none could ever be reported, and nothing was sent.
        let advance = vector.head - self.head.map_or(0, |h| h + 1) + 1;
        self.timer_credit = self.timer_credit.saturating_sub(advance);
        self.head = Some(vector.head);
        self.judge(&vector);
        self.update_window(now);
        match self.mode {
            Mode::Rate => {
                // The timer is the send clock: one packet per interval, re-timed to the newest
                // interval but never earlier than now.
                let ipi = self.rate_interval();
                let due = self.deadline.unwrap_or(now).min(now + ipi).max(now);
                self.deadline = Some(due);
            }
            _ => {
                // Armed while packets are out, and also while a window of 0 (ns-2's
                // `(int) W` below 1, [`TfwcConfig::min_window`]) holds back data: then only the
                // timer lets a packet out, as ns-2.34's `output()` re-arms it on every Ack Vector.
                if self.timer_credit > 0 && self.deadline.is_some() {
                    // Packets the timer let out are still unreported: "the timer is (re)set
                    // whenever a new packet is sent" (002 Sec. 3.2.5), and this Ack Vector,
                    // about older packets, sent none. Restarting it put the next expiry a
                    // fresh RTO away (about 15 s after the outage's 9 s RTT samples) instead
                    // of the running 2·SRTT, the expiry whose packet the link, up again, carries.
                } else if self.next_seq > vector.head + 1
                    || (self.has_data() && !self.window_open())
                {
                    self.deadline = Some(now + self.window_rto());
                } else {
                    self.deadline = None;
                }
            }
        }
    }

    fn on_timeout(&mut self, now: Time) {
        let Some(d) = self.deadline else { return };
        if now < d {
            return;
        }
        self.stats.timeouts += u64::from(self.mode != Mode::Rate);
        match self.mode {
            Mode::Rate => {
                self.released += 1;
                self.deadline = Some(now + self.rate_interval());
            }
            _ => {
                // Algorithm 1: back off, re-arm, let one more packet into the window.
                self.stall.get_or_insert(self.last_feedback);
                if self.cfg.timer_backoff {
                    if self.ns2_rtt.is_some() {
                        // ns-2.28's `rto_ = 2·rto_`, capped at `max_rto`.
                        if self.rto() < self.cfg.max_rto {
                            self.ns2_backoff *= 2.0;
                        }
                    } else {
                        self.rtt.backoff();
                    }
                }
                self.timer_credit += 1;
                if !self.cfg.timer_backoff {
                    // ns-2.34: `rto_ = 2·srtt_` (1 s before any sample), kept for the
                    // packets this expiry lets out, until an Ack Vector recomputes it.
                    let two_srtt = self
                        .srtt()
                        .unwrap_or(Dur::from_secs(1))
                        .saturating_mul(2)
                        .min(self.cfg.max_rto);
                    self.rto_after_expiry = Some(two_srtt);
                }
                self.deadline = Some(now + self.window_rto());
            }
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if !self.has_data() {
            return None;
        }
        let may = match self.mode {
            Mode::Rate => {
                if self.released > 0 {
                    self.released -= 1;
                    true
                } else {
                    false
                }
            }
            _ => self.window_open(),
        };
        if !may {
            return None;
        }
        if self.mode == Mode::Rate && self.stall.is_none() && self.rate_mode_stalled(now) {
            self.stall = Some(self.last_feedback);
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.sent.push_back((now, self.stall));
        let size = match &mut self.backlog {
            None => self.cfg.packet_size,
            Some(b) => {
                // A packet carries the application's bytes after the header (`header_size`,
                // 0 in the simulator, where a packet is ns-2's `size_` whole): a full payload,
                // or the rest of the buffer ([`TfwcConfig::tail_packet`]).
                let full = self
                    .cfg
                    .packet_size
                    .saturating_sub(self.cfg.header_size)
                    .max(1);
                let carried = (*b).min(u64::from(full)) as u32;
                *b -= u64::from(carried);
                match self.cfg.tail_packet {
                    TailPacket::Short => self.cfg.header_size.saturating_add(carried),
                    TailPacket::Whole => self.cfg.packet_size,
                }
            }
        };
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(size);
        if self.mode != Mode::Rate {
            // "The timer is (re)set with t_RTO whenever a new packet is sent" (002 Sec. 3.2.5).
            self.deadline = Some(now + self.window_rto());
        }
        self.last_send = now;
        let aoa = self.next_judge.checked_sub(1);
        Some(Packet {
            size,
            header: Header::TfwcData {
                seq,
                sent_at: now,
                aoa,
            },
        })
    }

    fn next_timeout(&self) -> Option<Time> {
        self.deadline
    }

    fn stats(&self) -> Stats {
        let p = self.history.loss_event_rate();
        Stats {
            cwnd: Some(self.cwnd as f64),
            p,
            ali: self.history.average_loss_interval(),
            rtt: self.srtt(),
            rto: Some(self.window_rto()),
            mode: self.mode.name(),
            ..self.stats.clone()
        }
    }
}

impl Sender for TfwcSender {
    fn buffered(&self) -> Option<u64> {
        TfwcSender::buffered(self)
    }
    fn payload_sent(&self) -> Option<u64> {
        Some(TfwcSender::payload_sent(self))
    }
    /// Count loss events again from `from` on ([`Self::loss_events_since`]): a measurement
    /// window's start.
    fn count_loss_events_from(&mut self, from: Time) {
        self.events_from = from;
        self.events_since = 0;
    }

    /// The loss events (`Stats::loss_events`) whose first lost packet was sent at or after the
    /// time given to [`Self::count_loss_events_from`], each located where the loss history
    /// puts it (002 Sec. 3, as RFC 5348 §5.2: a loss interval is counted in packets sent, from
    /// the packet that starts the event). `Stats::loss_events` counts an event when the Ack
    /// Vector shows it, so after an outage it adds, over a window, the losses of packets sent
    /// before it, which outnumbered the packets sent in it; each event counted here is one of
    /// those packets.
    fn loss_events_since(&self) -> Option<u64> {
        Some(self.events_since)
    }

    fn offer(&mut self, bytes: Option<u64>) {
        self.backlog = match (self.backlog, bytes) {
            (_, None) => None,
            (Some(b), Some(x)) => Some(b.saturating_add(x)),
            (None, Some(x)) => Some(x),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::{Ns2Rtt, TailPacket, TfwcConfig, TfwcSender};
    use crate::endpoint::{Endpoint, Sender};
    use crate::loss_history::LossEstimator;
    use crate::time::{Dur, Time};

    /// A sender after one loss whose history is seeded with the interval `ali`, and RTT
    /// samples of `rtts_ms`; returns it with its loss event rate.
    fn after_loss(cfg: TfwcConfig, ali: f64, rtts_ms: &[u64]) -> (TfwcSender, f64) {
        let mut tx = TfwcSender::new(cfg, Time::ZERO);
        tx.history.on_loss_event();
        tx.history.seed(ali);
        for &ms in rtts_ms {
            tx.delay.on_sample(Dur::from_millis(ms));
            tx.rtt.on_sample(Dur::from_millis(ms));
        }
        let p = tx.history.loss_event_rate().unwrap();
        (tx, p)
    }

    /// 002 Sec. 3.2.5, footnote 6: in the rate-driven mode the thesis preset's packet interval
    /// is `t_RTT·sqrt(2p/3) + t_RTO·3·sqrt(3p/8)·p·(1 + 32p²)` as printed, not multiplied by
    /// TFRC's `sqrt(R)/M` (Choi's code, which the default keeps with its 0.8). The RTT jumps
    /// from 0.1 s to 0.4 s so that `sqrt(R)/M` is about 1.82, far from 1.
    #[test]
    fn thesis_rate_interval_is_footnote_6_as_printed() {
        for (cfg, thesis) in [(TfwcConfig::thesis(), true), (TfwcConfig::default(), false)] {
            let (tx, p) = after_loss(cfg, 5.0, &[100, 400]);
            let (r, t0) = (0.4, tx.rtt.base_rto().as_secs_f64());
            let ipi = r * (2.0 * p / 3.0).sqrt()
                + t0 * 3.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p);
            let ism = tx.delay.ism_factor();
            assert!(ism > 1.8, "{ism}");
            let want = if thesis { ipi } else { ipi * ism * 0.8 };
            let got = tx.rate_interval().as_secs_f64();
            assert!(
                (got - want).abs() < 1e-6,
                "thesis {thesis}: {got} against {want}"
            );
        }
    }

    /// Above `p = 8/27` the default (Choi's `new_rto`) caps the timeout term's factor at 1,
    /// PFTK's `min(1, 3·sqrt(3p/8))`; the thesis preset keeps footnote 6's uncapped factor.
    /// ALI 2 gives `p = 0.5`, where `3·sqrt(3p/8)` = 1.30.
    #[test]
    fn the_default_rate_interval_caps_the_timeout_factor_at_one() {
        for (cfg, capped) in [(TfwcConfig::default(), true), (TfwcConfig::thesis(), false)] {
            let (tx, p) = after_loss(cfg, 2.0, &[100]);
            assert!((p - 0.5).abs() < 1e-12, "{p}");
            let factor = 3.0 * (3.0 * p / 8.0).sqrt();
            assert!(factor > 1.29, "{factor}");
            let factor = if capped { 1.0 } else { factor };
            let (r, t0) = (0.1, tx.rtt.base_rto().as_secs_f64());
            let ipi = r * (2.0 * p / 3.0).sqrt() + t0 * factor * p * (1.0 + 32.0 * p * p);
            let scale = if capped {
                tx.delay.ism_factor() * 0.8
            } else {
                1.0
            };
            let got = tx.rate_interval().as_secs_f64();
            assert!(
                (got - ipi * scale).abs() < 1e-6,
                "capped {capped}: {got} against {}",
                ipi * scale
            );
        }
    }

    /// An offered buffer goes out in full payloads and its tail in a short packet, header and
    /// the rest (as TFRC's sender in its test
    /// `offered_bytes_limit_what_is_sent_and_an_empty_buffer_sends_nothing`); `tail_packet =
    /// whole` pads the tail to `packet_size` as before; a bulk source's packets are all
    /// `packet_size`. A window of 10 lets every packet out without an Ack Vector.
    #[test]
    fn an_offered_buffer_s_tail_goes_in_a_short_packet() {
        let sizes = |tail: TailPacket, offer: Option<u64>| {
            let cfg = TfwcConfig {
                packet_size: 1028,
                header_size: 28,
                initial_window: 10,
                tail_packet: tail,
                ..TfwcConfig::default()
            };
            let mut tx = TfwcSender::new(cfg, Time::ZERO);
            tx.offer(offer);
            let sizes: Vec<u32> = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO))
                .map(|p| p.size)
                .collect();
            (
                sizes,
                tx.buffered(),
                tx.stats().bytes_sent,
                tx.payload_sent(),
            )
        };
        // Wire bytes 2500 + 3 headers; the payload is exactly what was offered.
        let (short, left, sent, payload) = sizes(TailPacket::Short, Some(2500));
        assert_eq!(short, vec![1028, 1028, 528]);
        assert_eq!((left, sent, payload), (Some(0), 2584, 2500));
        let (whole, left, sent, payload) = sizes(TailPacket::Whole, Some(2500));
        assert_eq!(whole, vec![1028; 3]);
        assert_eq!((left, sent, payload), (Some(0), 3084, 3000));
        // Exactly two payloads: no tail, no third packet.
        assert_eq!(sizes(TailPacket::Short, Some(2000)).0, vec![1028; 2]);
        for tail in [TailPacket::Short, TailPacket::Whole] {
            assert_eq!(sizes(tail, None).0, vec![1028; 10], "{tail:?}");
        }
        // More bytes offered later join the buffer: the window of 10 has room for 7 more.
        let mut tx = TfwcSender::new(
            TfwcConfig {
                initial_window: 10,
                ..TfwcConfig::default()
            },
            Time::ZERO,
        );
        tx.offer(Some(1500));
        let first: Vec<u32> = std::iter::from_fn(|| tx.poll_transmit(Time::ZERO))
            .map(|p| p.size)
            .collect();
        assert_eq!(first, vec![1000, 500]);
        tx.offer(Some(1));
        assert_eq!(tx.poll_transmit(Time::ZERO).map(|p| p.size), Some(1));
        assert_eq!(tx.poll_transmit(Time::ZERO), None);
    }

    /// Vic's estimator is Choi's with df = 0.95 (spec 002 §2.5 [X]): samples 0.1 s then 0.2 s
    /// give SRTT 0.105 and RTTVAR 0.05 + 0.25·(0.095 − 0.05) = 0.06125; the rate mode's `t0`
    /// counts 10 ms ticks, so a 30 ms RTT is not rounded up to ns-2's 0.1 s tick.
    #[test]
    fn vic_estimator_has_df_095_and_10_ms_ticks() {
        let mut e = Ns2Rtt::new(TfwcConfig::vic().rtt_gain);
        e.on_sample(0.1);
        e.on_sample(0.2);
        assert!((e.srtt.unwrap() - 0.105).abs() < 1e-12, "{:?}", e.srtt);
        assert!((e.rttvar - 0.06125).abs() < 1e-12, "{}", e.rttvar);
        let t0 = |cfg: TfwcConfig| {
            let (tx, _) = after_loss(cfg, 20.0, &[30; 50]);
            tx.rtt.base_rto()
        };
        let (vic, ns2) = (t0(TfwcConfig::vic()), t0(TfwcConfig::default()));
        assert!(vic < Dur::from_millis(100), "{vic}");
        assert!(ns2 >= Dur::from_millis(200), "{ns2}");
    }

    /// Choi's ns-2.34 `update_rtt()` by hand: first sample 0.1 s gives SRTT 0.1, RTTVAR 0.05,
    /// RTO 0.3; a second of 0.2 s gives SRTT 0.11, RTTVAR 0.05 + 0.25·(0.09 − 0.05) = 0.06,
    /// RTO 0.35; a steady RTT lets RTTVAR decay until the 10 ms granularity term is the margin.
    #[test]
    fn ns2_estimator_follows_choi_update_rtt() {
        let mut e = Ns2Rtt::new(0.1);
        assert_eq!(e.rto(), None);
        e.on_sample(0.1);
        assert!((e.rto().unwrap() - 0.3).abs() < 1e-12);
        e.on_sample(0.2);
        assert!((e.srtt.unwrap() - 0.11).abs() < 1e-12);
        assert!((e.rttvar - 0.06).abs() < 1e-12);
        assert!((e.rto().unwrap() - 0.35).abs() < 1e-12);
        for _ in 0..2000 {
            e.on_sample(0.2);
        }
        assert!((e.rto().unwrap() - 0.21).abs() < 1e-6, "{:?}", e.rto());
    }
}
