//! The TFWC sender (002 Ch. 3): Ack-clocked, window from the equation, loss history at the
//! sender, hybrid rate mode below two packets, cwnd jitter, no retransmissions.

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::ack_vector::{AckVector, Coverage};
use super::config::{Rounding, TfwcConfig};
use crate::endpoint::{Endpoint, Sender, Stats};
use crate::equation::Equation;
use crate::loss_events::LossEventGrouper;
use crate::loss_history::{AliConfig, LossEstimator, LossHistory, PacketOutcome};
use crate::packet::{Header, Packet};
use crate::rtt::{TcpRtt, TcpRttConfig, TcpRttMode, TfrcRtt, TfrcRttConfig};
use crate::time::{Dur, Time};

/// Which regime the sender is in (for stats and plots).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Before the first loss: +1 packet per ACK (002 Sec. 3.2.3).
    SlowStart,
    /// `cwnd = 1/f(p)`, Ack-clocked (002 Sec. 3.2.4).
    Window,
    /// Below [`TfwcConfig::rate_threshold`]: one packet per equation interval (002 Sec. 3.2.6).
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

/// Jitter bookkeeping for one RTT (002 Sec. 3.2.7).
#[derive(Clone, Debug)]
struct JitterRound {
    start: Time,
    inflated: bool,
    ali_first: Option<f64>,
}

/// TFWC sender: at most [`TfwcSender::cwnd`] packets beyond the highest number the receiver
/// reported may be outstanding (002 Eq. 3.6), plus those the timer lets out in rate mode.
///
/// Feed it every Ack Vector ([`Header::TfwcAck`]) with [`Endpoint::on_packet`] and poll
/// [`Endpoint::poll_transmit`] after each one and at [`Endpoint::next_timeout`]. Packets are
/// never retransmitted; [`Sender::offer`] limits the data an application has (`None`, the
/// default, is a bulk source).
#[derive(Clone, Debug)]
pub struct TfwcSender {
    cfg: TfwcConfig,
    eq: Equation,
    mode: Mode,
    /// Next sequence number to send.
    next_seq: u64,
    /// Lowest number not yet judged received or lost; also one above the AoA.
    next_judge: u64,
    /// Send times of `next_judge..next_seq`.
    sent: VecDeque<Time>,
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
    rtt: TcpRtt,
    /// The latest sample and the sqrt-RTT mean for the rate-mode interval (spec 002 §2.8 [X]).
    delay: TfrcRtt,
    /// Send clock in rate mode, retransmission-style timer in window mode.
    deadline: Option<Time>,
    /// Rate mode: packets the timer has released and `poll_transmit` has not yet sent.
    released: u32,
    jitter: JitterRound,
    rng: Pcg64Mcg,
    /// Bytes the application still has to send; `None` is a bulk source.
    backlog: Option<u64>,
    stats: Stats,
    unknown: u64,
    stale_acks: u64,
}

impl TfwcSender {
    /// A sender whose first packet may leave at `now`. The configuration is assumed validated
    /// ([`TfwcConfig::validate`]); out-of-range values are clamped, not trusted.
    pub fn new(cfg: TfwcConfig, now: Time) -> TfwcSender {
        let ali = AliConfig {
            n: cfg.history_size.clamp(1, crate::loss_history::MAX_HISTORY),
            ..AliConfig::tfwc()
        };
        let history = LossHistory::new(ali)
            .unwrap_or_else(|_| LossHistory::new(AliConfig::tfwc()).expect("preset is valid"));
        let rtt = TcpRtt::new(TcpRttConfig {
            mode: TcpRttMode::Rfc6298,
            tick: Dur::from_millis(10),
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            initial_rto: cfg.initial_rto,
            ..TcpRttConfig::default()
        });
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
            delay: TfrcRtt::new(TfrcRttConfig { beta: 0.1 }),
            deadline: None,
            released: 0,
            jitter: JitterRound {
                start: now,
                inflated: false,
                ali_first: None,
            },
            rng: Pcg64Mcg::seed_from_u64(cfg.seed),
            backlog: None,
            stats: Stats::default(),
            unknown: 0,
            stale_acks: 0,
            cfg,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TfwcConfig {
        &self.cfg
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
        (whole.max(1.0) as u64).min(u64::from(self.cfg.max_window))
    }

    /// The first loss ends slow start (002 Algorithm 2): halve the window and seed the history
    /// with the interval whose equation window is the halved one. The thesis searches `p` in
    /// steps of 10⁻⁵; the equation's exact inverse gives the same seed without the grid
    /// (spec 002 §2.7 [I]).
    fn first_loss(&mut self, sent_at: Time) {
        self.cwnd = (self.cwnd / 2).max(1);
        let p = self.eq.loss_for_window(self.cwnd as f64);
        self.grouper.force_new_event(sent_at);
        self.history.on_loss_event();
        self.history.seed(1.0 / p);
        self.mode = Mode::Window;
        self.stats.loss_events += 1;
    }

    fn judge(&mut self, v: &AckVector) {
        let srtt = self.rtt.srtt().unwrap_or(Dur::ZERO);
        while self.next_judge.saturating_add(self.cfg.margin) < v.head {
            let seq = self.next_judge;
            let sent_at = self.sent.pop_front().unwrap_or(Time::ZERO);
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
            let outcome = self.grouper.classify(sent_at, lost, srtt);
            if outcome == PacketOutcome::NewLossEvent {
                self.stats.loss_events += 1;
            }
            self.history.on_packet(outcome);
        }
    }

    /// The Ack-clocked window update of 002 Sec. 3.2.4 with the rebuilt Algorithm 3 and the
    /// jitter of Sec. 3.2.7.
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
        self.cwnd = self.window_of(w);
        if self.mode == Mode::Window && self.cfg.jitter {
            self.jitter(now, p);
        }
    }

    fn jitter(&mut self, now: Time, p: f64) {
        let ali = 1.0 / p;
        let first = *self.jitter.ali_first.get_or_insert(ali);
        let allowed =
            p <= self.cfg.jitter_max_p && (ali - first).abs() <= self.cfg.jitter_max_ali_change;
        let draw = (self.rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if allowed && draw < self.cfg.jitter_probability {
            self.cwnd += 1;
            self.jitter.inflated = true;
        }
        let srtt = self.rtt.srtt().unwrap_or(Dur::MAX);
        if now.saturating_since(self.jitter.start) > srtt {
            // The "force inflater" at the end of each RTT (002 Sec. 3.2.7).
            if allowed && self.cfg.jitter_force && !self.jitter.inflated {
                self.cwnd += 1;
            }
            self.jitter = JitterRound {
                start: now,
                inflated: false,
                ali_first: Some(ali),
            };
        }
    }

    /// Footnote 6 of 002 with Choi's delay scaling: the equation interval `s/X(p, R, t0)` at the
    /// latest RTT sample, scaled by `sqrt(R)/M` (spec 002 §2.8 [X]).
    fn rate_interval(&self) -> Dur {
        let p = self.history.loss_event_rate().unwrap_or(1.0);
        let r = self
            .delay
            .latest()
            .or(self.rtt.srtt())
            .unwrap_or(self.cfg.initial_rto)
            .as_secs_f64();
        let t0 = self.rtt.base_rto().as_secs_f64();
        let s = f64::from(self.cfg.packet_size);
        let x = self.eq.rate_with_rto(s, r, t0, p);
        if x.is_nan() || x <= 0.0 {
            return self.cfg.max_rto;
        }
        let ipi = s / x * self.delay.ism_factor() * self.cfg.rate_mode_scale;
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
        let sample = now.saturating_since(echo);
        self.rtt.on_sample(sample);
        self.rtt.reset_backoff();
        self.delay.on_sample(sample);
        self.head = Some(vector.head);
        self.timer_credit = 0;
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
                if self.next_seq > vector.head + 1 {
                    self.deadline = Some(now + self.rtt.rto());
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
                if self.cfg.timer_backoff {
                    self.rtt.backoff();
                }
                self.timer_credit += 1;
                let rto = if self.cfg.timer_backoff {
                    self.rtt.rto()
                } else {
                    self.rtt
                        .srtt()
                        .map_or(self.rtt.rto(), |s| s.saturating_mul(2))
                };
                self.deadline = Some(now + rto);
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
        let seq = self.next_seq;
        self.next_seq += 1;
        self.sent.push_back(now);
        let size = self.cfg.packet_size;
        if let Some(b) = &mut self.backlog {
            *b = b.saturating_sub(u64::from(size));
        }
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += u64::from(size);
        if self.mode != Mode::Rate {
            // "The timer is (re)set with t_RTO whenever a new packet is sent" (002 Sec. 3.2.5).
            self.deadline = Some(now + self.rtt.rto());
        }
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
            rtt: self.rtt.srtt(),
            rto: Some(self.rtt.rto()),
            mode: self.mode.name(),
            ..self.stats.clone()
        }
    }
}

impl Sender for TfwcSender {
    fn offer(&mut self, bytes: Option<u64>) {
        self.backlog = match (self.backlog, bytes) {
            (_, None) => None,
            (Some(b), Some(x)) => Some(b.saturating_add(x)),
            (None, Some(x)) => Some(x),
        };
    }
}
