//! The TFRC sender (004 Sec. 3.3, 3.5, 3.6; RFC 5348 §4): rate pacing, RTT measurement,
//! slowstart, the equation-driven rate, the no-feedback timer, ISM and send errors.

use crate::endpoint::{Endpoint, Sender, Stats};
use crate::equation::Equation;
use crate::packet::{Header, Packet};
use crate::rtt::{TcpRtt, TfrcRtt};
use crate::time::{Dur, Time};

use super::config::{
    DataLimitedRule, InitialWindow, NofeedbackRule, RtoRule, SlowstartBound, TfrcConfig,
};
use super::wire::{DataHeader, FeedbackHeader, Mode, ROUND_MAX};

/// A TFRC sender. See the [module doc](super) for the rules.
///
/// By default it is an always-backlogged source: whenever polled at or after its next send time
/// it returns a packet of [`TfrcConfig::packet_size`] bytes. [`Sender::offer`]`(Some(bytes))`
/// makes it application-limited (a codec): the bytes join a send buffer, each packet carries
/// `min(buffer, s)` bytes of it (a frame's last packet may be short, and its gap `size/X` is
/// shorter to match), and `poll_transmit` returns nothing while the buffer is empty (nor does
/// `next_timeout` report a send time then). Call `poll_transmit` after every `offer`, as after
/// any event: the first poll that sees new data is when the sender learns of it.
/// `offer(None)` makes it bulk again. What a data-limited sender does with the reports is
/// [`TfrcConfig::data_limited`] and [`TfrcConfig::nofeedback_rule`] (RFC 5348 §4.3, §4.4,
/// §8.2; the thesis' sender is never data-limited).
///
/// Do not discard a packet `poll_transmit` returned: its sequence number is used, so the
/// receiver counts it as lost; if the socket refused it, call [`Sender::on_send_error`].
///
/// - [`TfrcSender::rate`] is the allowed rate `X` in bytes/s;
/// - [`Endpoint::next_timeout`] is the next send time or an earlier protocol timer, whichever
///   comes first;
/// - the data header's `seq` and `timestamp` must reach the receiver unchanged (the wire form
///   is [`super::wire::DataHeader`]); the application's payload goes after it.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    cfg: TfrcConfig,
    eq: Equation,
    rtt: TfrcRtt,
    /// ns-2's TCP-style RTO ([`RtoRule::Ns2Tcp`]); fed only under that rule.
    tcp_rtt: TcpRtt,
    mode: Mode,
    /// Allowed sending rate `X` (004 `b_act`), bytes/s.
    x: f64,
    /// The rate the per-packet increase climbs to (004 Sec. 3.5.1), and the step per packet
    /// (Eq. 3.10's `Δb_P`). `climb <= x` when no increase is under way.
    climb: f64,
    climb_step: f64,
    /// Last reported receive rate `X_recv` (004 `b_rep`), bytes/s.
    x_recv: f64,
    /// Last reported loss event rate.
    p: f64,
    /// Last rate computed from the equation, bytes/s (for stats).
    x_calc: Option<f64>,
    seq: u64,
    /// When the next packet is due.
    next_send: Time,
    last_send: Option<Time>,
    /// No-feedback timer deadline; armed by the first packet sent.
    nofeedback_at: Option<Time>,
    /// The slowstart report timer (004 Eq. 3.16), armed only in slowstart.
    slowstart_at: Option<Time>,
    /// Interval the no-feedback timer was last armed with.
    nofeedback_iv: Dur,
    /// When slowstart last doubled the rate (RFC 5348 §4.3 `tld`), and the smoothed RTT then.
    last_double: Option<Time>,
    double_rtt: f64,
    /// When a report last changed the rate (ns-2's `last_change_`, read only under
    /// [`TfrcConfig::increase_elapsed`], whose doc gives the rule): slowstart's start and
    /// doublings and every congestion-control report except the first to show a loss.
    last_change: Option<Time>,
    packets_sent: u64,
    bytes_sent: u64,
    timeouts: u64,
    feedbacks: u64,
    send_errors: u64,
    /// Application bytes waiting to be sent ([`Sender::offer`]); `None` for a bulk source.
    buffer: Option<u64>,
    /// Since when the data now in the buffer has been waiting: the first `poll_transmit` that
    /// saw it (cleared when the buffer empties). A packet sent at its due time whose data was
    /// waiting before that time is a send at which the sender was not data-limited.
    waiting_since: Option<Time>,
    /// Payload bytes of the last packet returned (what a send error takes back).
    last_payload: u32,
    /// RFC 5348 §8.2.1: `not_limited1`, `not_limited2` (send times at which the sender was not
    /// data-limited; `None` is "never", below every time), and `t_new`, `t_next` of the last
    /// report.
    not_limited: [Option<Time>; 2],
    t_new: Time,
    t_next: Time,
    /// Whether the interval the last report covered was data-limited (§8.2.1).
    data_limited: bool,
    data_limited_reports: u64,
    /// RFC 5348 §4.3 `X_recv_set`: `(time, rate in bytes/s)`, initially `{Infinity}` (stamped
    /// when the first packet leaves).
    x_recv_set: Vec<(Time, f64)>,
    /// The bound step 3 of §4.3 last computed, bytes/s (for tests and stats).
    recv_limit: f64,
    /// Whether a packet left since the no-feedback timer was last set (RFC 5348 §4.4's
    /// "idle ever since the nofeedback timer was set" is its negation).
    sent_since_nofeedback: bool,
}

impl TfrcSender {
    /// A sender that sends its first packet when first polled. `cfg` should have passed
    /// [`TfrcConfig::validate`]; out-of-range values are clamped where they would divide by zero.
    pub fn new(cfg: TfrcConfig) -> TfrcSender {
        let eq = cfg.equation();
        let rtt = TfrcRtt::new(cfg.rtt());
        let tcp_rtt = TcpRtt::new(cfg.ns2_rto());
        let s = f64::from(cfg.packet_size.max(1));
        let x = s / cfg.initial_interval.as_secs_f64().max(1e-9);
        TfrcSender {
            eq,
            rtt,
            tcp_rtt,
            mode: Mode::InitRtt,
            x,
            climb: x,
            climb_step: 0.0,
            x_recv: 0.0,
            p: 0.0,
            x_calc: None,
            seq: 0,
            next_send: Time::ZERO,
            last_send: None,
            nofeedback_at: None,
            nofeedback_iv: cfg.initial_nofeedback,
            slowstart_at: None,
            last_double: None,
            double_rtt: 0.0,
            last_change: None,
            packets_sent: 0,
            bytes_sent: 0,
            timeouts: 0,
            feedbacks: 0,
            send_errors: 0,
            buffer: None,
            waiting_since: None,
            last_payload: 0,
            not_limited: [None, None],
            t_new: Time::ZERO,
            t_next: Time::ZERO,
            data_limited: false,
            data_limited_reports: 0,
            x_recv_set: vec![(Time::ZERO, f64::INFINITY)],
            recv_limit: f64::INFINITY,
            sent_since_nofeedback: false,
            cfg,
        }
    }

    /// Application bytes waiting in the send buffer; `None` for a bulk source.
    pub fn buffered(&self) -> Option<u64> {
        self.buffer
    }

    /// Whether the interval covered by the last report was data-limited (RFC 5348 §8.2.1),
    /// and how many reports so far covered a data-limited interval. Tracked under every
    /// [`TfrcConfig::data_limited`] rule; only `rfc5348` acts on it.
    pub fn data_limited(&self) -> (bool, u64) {
        (self.data_limited, self.data_limited_reports)
    }

    /// `max(X_recv_set)` in bytes/s (RFC 5348 §4.3; Infinity until the first report's entry
    /// replaces the initial one). Under `data_limited = "thesis"` the set is the last report's
    /// `X_recv` alone.
    pub fn x_recv_set_max(&self) -> f64 {
        self.x_recv_set
            .iter()
            .map(|e| e.1)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// `recv_limit` of RFC 5348 §4.3 at the last report, bytes/s (`2·X_recv` under the
    /// thesis rule).
    pub fn recv_limit(&self) -> f64 {
        self.recv_limit
    }

    /// RFC 5348 §4.4's `recover_rate`: the initial rate `W_init/R` of §4.2 with `W_init =
    /// min(4s, max(2s, 4380 B))` and the current `R`; before any RTT sample the probing rate
    /// `s/initial_interval` (see [`NofeedbackRule::Rfc5348`]).
    pub fn recover_rate(&self) -> f64 {
        let s = self.s();
        match self.r() {
            Some(r) => (4.0 * s).min((2.0 * s).max(4380.0)) / r,
            None => s / self.cfg.initial_interval.as_secs_f64().max(1e-9),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TfrcConfig {
        &self.cfg
    }

    /// Allowed sending rate `X` in bytes/s.
    pub fn rate(&self) -> f64 {
        self.x
    }

    /// Current mode (004 App. B).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The RTT estimator (smoothed RTT, latest sample, ISM factor).
    pub fn rtt(&self) -> &TfrcRtt {
        &self.rtt
    }

    /// Reports received.
    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }

    /// The equation's rate `X_calc` at the last report with `p > 0`, bytes/s.
    pub fn x_calc(&self) -> Option<f64> {
        self.x_calc
    }

    /// Send errors reported through [`Sender::on_send_error`].
    pub fn send_errors(&self) -> u64 {
        self.send_errors
    }

    fn s(&self) -> f64 {
        f64::from(self.cfg.packet_size.max(1))
    }

    /// `s/t_mbi`: the floor of the rate (RFC 5348 §4.3).
    fn min_rate(&self) -> f64 {
        self.s() / self.cfg.t_mbi.as_secs_f64().max(1e-9)
    }

    /// The smoothed RTT in seconds, kept above a nanosecond so `s/R` stays finite.
    fn r(&self) -> Option<f64> {
        self.rtt.smoothed_secs().map(|r| r.max(1e-9))
    }

    /// The gap before the next packet: `s/X` (004 Eq. 3.17), times the ISM factor
    /// `sqrt(R_sample)/avg(sqrt(R))` when enabled (Eq. 3.19–3.20).
    pub fn packet_gap(&self) -> Dur {
        self.gap_after(self.s())
    }

    /// The gap after a packet of `bytes` payload: `bytes/X` (times the ISM factor), so a
    /// short packet (a frame's tail) holds the byte rate `X`.
    fn gap_after(&self, bytes: f64) -> Dur {
        let mut secs = bytes / self.x.max(self.min_rate());
        if self.cfg.ism {
            secs *= self.rtt.ism_factor();
        }
        // At least 1 ns: an RTT sample of zero (a report whose holding delay covers the whole
        // round trip) makes the ISM factor 0, and a zero gap would let `poll_transmit` return
        // packets at one instant without end.
        Dur::from_secs_f64(secs.min(self.cfg.t_mbi.as_secs_f64())).max(Dur::from_nanos(1))
    }

    /// `max(a·R, c·s/X)` (004 Eq. 3.12 with a = c = d; RFC 5348 §4.3 with a = 4, c = 2); before
    /// the first RTT sample, `max(initial_nofeedback, c·s/X)`.
    fn nofeedback_interval(&self) -> Dur {
        let per_packet = self.cfg.nofeedback_packets * self.s() / self.x.max(self.min_rate());
        let secs = match self.r() {
            Some(r) => (self.cfg.nofeedback_rtts * r).max(per_packet),
            None => self.cfg.initial_nofeedback.as_secs_f64().max(per_packet),
        };
        Dur::from_secs_f64(secs)
    }

    fn arm_nofeedback(&mut self, now: Time) {
        self.nofeedback_iv = self.nofeedback_interval();
        self.nofeedback_at = Some(now + self.nofeedback_iv);
        self.sent_since_nofeedback = false;
    }

    /// Whether the sender has data for a packet now.
    fn has_data(&self) -> bool {
        self.buffer.map_or(true, |b| b > 0)
    }

    /// RFC 5348 §8.2.1 at a report echoing `t_new`: was the interval `(t_new − R, t_new]` it
    /// covers data-limited (no send in it at which the sender was not data-limited)?
    fn covered_interval_data_limited(&mut self, now: Time, t_new: Time, r: f64) -> bool {
        self.t_new = t_new;
        self.t_next = now;
        let inside = |t: Option<Time>| {
            t.is_some_and(|t| t <= t_new && t_new.saturating_since(t).as_secs_f64() < r)
        };
        let limited = !(inside(self.not_limited[0]) || inside(self.not_limited[1]));
        let [n1, n2] = self.not_limited;
        if n1.map_or(true, |t| t <= t_new) && n2.is_some_and(|t| t > t_new) {
            self.not_limited[0] = n2;
        }
        limited
    }

    /// RFC 5348 §8.2.1, "when the sender is not data-limited at this instant" (a packet
    /// sent at its due time with data waiting, or any bulk send).
    fn note_not_limited(&mut self, now: Time) {
        if self.not_limited[0].map_or(true, |t| t <= self.t_new) {
            self.not_limited[0] = Some(now);
        } else if self.not_limited[1].map_or(true, |t| t <= self.t_next) {
            self.not_limited[1] = Some(now);
        }
    }

    /// "Maximize X_recv_set" (RFC 5348 §4.3): add `x_recv`, drop the initial Infinity, keep
    /// only the largest entry, stamped `now`.
    fn maximize_x_recv_set(&mut self, now: Time, x_recv: f64) {
        let max = self
            .x_recv_set
            .iter()
            .map(|e| e.1)
            .filter(|v| v.is_finite())
            .fold(x_recv, f64::max);
        self.x_recv_set.clear();
        self.x_recv_set.push((now, max));
    }

    /// "Update X_recv_set" (RFC 5348 §4.3, §8.2.2): add `x_recv`, delete entries "older than
    /// two round-trip times" (an entry exactly `2R` old stays), keep the `N` most recent.
    fn update_x_recv_set(&mut self, now: Time, x_recv: f64, r: f64) {
        self.x_recv_set.push((now, x_recv));
        self.x_recv_set
            .retain(|&(t, _)| now.saturating_since(t).as_secs_f64() <= 2.0 * r);
        let n = self.cfg.x_recv_set_len.max(1);
        if self.x_recv_set.len() > n {
            self.x_recv_set.drain(..self.x_recv_set.len() - n);
        }
    }

    /// Step 3 of RFC 5348 §4.3 up to `recv_limit`, for a report with receive rate `x_recv` and
    /// loss event rate `p` (the last report's was `p_prev`), once
    /// [`Self::covered_interval_data_limited`] has classified its interval.
    fn rfc5348_recv_limit(&mut self, now: Time, x_recv: f64, p_prev: f64) -> f64 {
        let r = self.r().unwrap_or(1.0);
        if self.data_limited {
            // The feedback carries `p` only, so "a new loss event or an increase in the loss
            // event rate p" is read as `p` above the last report's: a new loss event that does
            // not raise `p` is invisible to the sender.
            if self.p > p_prev {
                for e in &mut self.x_recv_set {
                    e.1 /= 2.0;
                }
                self.maximize_x_recv_set(now, 0.85 * x_recv);
                self.x_recv_set_max()
            } else {
                self.maximize_x_recv_set(now, x_recv);
                2.0 * self.x_recv_set_max()
            }
        } else {
            self.update_x_recv_set(now, x_recv, r);
            2.0 * self.x_recv_set_max()
        }
    }

    /// `Update_Limits(timer_limit)` of RFC 5348 §4.4. An expiry never raises `X`: under the
    /// RFC's own rules `X = min(X_Bps, 2·max(X_recv_set))` already holds and the result is
    /// `X/2`; with the thesis' increase limit `X` can sit below that bound, and recomputing it
    /// would raise `X` on a missing report.
    fn update_limits(&mut self, now: Time, timer_limit: f64) {
        let timer_limit = timer_limit.max(self.min_rate());
        self.x_recv_set.clear();
        self.x_recv_set.push((now, timer_limit / 2.0));
        // "Recalculate X as in step (4) of Section 4.3": p > 0 here.
        let x_bps = self.x_calc.unwrap_or(f64::INFINITY);
        self.recv_limit = 2.0 * self.x_recv_set_max();
        self.x = x_bps.min(self.recv_limit).min(self.x).max(self.min_rate());
        self.climb = self.x;
    }

    /// After a rate change, let the next packet go at the new gap from the last one rather than
    /// wait out a gap computed at the old (possibly far lower) rate.
    fn reschedule(&mut self) {
        if let Some(last) = self.last_send {
            self.next_send = self.next_send.min(last + self.packet_gap());
        }
    }

    /// Moves the allowed rate to `new`. A decrease is immediate (004 Sec. 3.5.2). An increase
    /// is immediate too unless [`TfrcConfig::smooth_increase`] is set and the rate is above
    /// one packet per RTT; then it is spread over the packets sent next (004 Sec. 3.5.1):
    /// `n_RTT = (X + Δb)/2 · R/s` (Eq. 3.9 as printed) and `Δb_P = Δb/max(n_RTT, 1)` (Eq.
    /// 3.10), each packet adding `Δb_P` until `new` is reached, so the cumulative increase per
    /// report is at most `Δb` (spec 004 §2.8's note on Eq. 3.9).
    ///
    /// `delta_b` is the `Δb` of the rule in force, which Eq. 3.9 and 3.10 are written in:
    /// `s/R` in congestion control (Eq. 3.7, where Eq. 3.9 becomes `X·R/(2s) + 1/2`) and
    /// slowstart's `min(b_act, b_rep)` (Eq. 3.14; "Like normal rate increase, slowstart
    /// increase is done smoothly by adjusting the inter-packet spacing over the number of
    /// packets sent during the next RTT", Sec. 3.6.1), where `n_RTT` is about the packets of
    /// one RTT at the current rate. `step_of` is what `Δb_P` divides: `Δb` itself under the
    /// thesis' rules ("the total increase `Δb` over the number of packets `n_RTT`", so a
    /// target `b_exp` less than `Δb` above `X` is reached in fewer packets), or the whole step
    /// `new − X` with [`TfrcConfig::increase_limit`] off. Until 2026-11-26 (tfrcaudit) tfcc
    /// used the congestion-control `n_RTT` in slowstart too, which spread each doubling over
    /// about half the packets of an RTT, and divided `new − X` rather than `Δb`.
    ///
    /// At or below one packet per RTT (`X ≤ s/R`) the increase is taken when the report
    /// arrives: "Whenever the sending rate is higher than one packet per RTT, the rate is
    /// adjusted smoothly by performing a partial increase each time a packet is sent" (Sec.
    /// 3.5.1; slowstart "likewise", Sec. 3.6.1), and Eq. 3.8 otherwise. Spreading it there
    /// would hold the increase until the next packet leaves at the old rate: after a collapse
    /// to 100 B/s that is 12 s later, with every report of a lower `p` in between ignored.
    /// (Spec 004 §2.8's pseudo-code drops the condition; tfcc followed it until 2026-11-26.)
    ///
    /// Eq. 3.11's `b_max = b_act + 2Δb` (renewed at each report) is not kept: the climb stops
    /// at `new ≤ X + Δb` set by the last report, so it can never reach `b_max`. The text is
    /// not consistent here: with Eq. 3.9 as printed the per-packet steps add about `2Δb` per
    /// RTT, which `b_max` would stop "after one RTT", against Eq. 3.7's "at most one packet
    /// per RTT over a time interval of one RTT"; tfcc keeps Eq. 3.7. So a single lost report
    /// stalls the increase after `Δb` until the next report, where the thesis says `b_max`
    /// "has no effect [...] if a report is lost".
    fn set_rate(&mut self, new: f64, r: f64, delta_b: f64, step_of: f64) {
        let new = new.max(self.min_rate());
        if self.cfg.smooth_increase && new > self.x && self.x * r > self.s() {
            let n_rtt = (self.x + delta_b) / 2.0 * r / self.s();
            self.climb = new;
            self.climb_step = step_of / n_rtt.max(1.0);
        } else {
            self.x = new;
            self.climb = new;
        }
    }

    fn on_feedback(&mut self, now: Time, f: &FeedbackHeader) {
        // 004 Eq. 3.1 with the receiver's holding delay removed (Sec. 3.3 footnote 1).
        let Some(elapsed) = now.checked_since(f.timestamp_echo) else {
            return; // an echo from the future: not ours, or corrupt
        };
        if f.timestamp_echo > self.last_send.unwrap_or(Time::ZERO) || f.p.is_nan() {
            return;
        }
        // RFC 5348 §4.3 step 2, `R_sample = (t_now − t_recvdata) − t_delay`: a holding delay
        // that covers the whole interval gives no valid sample (<= 0, saturated to 0 here); the
        // estimator raises it to `min_rtt_sample` ([`crate::rtt::DEFAULT_MIN_RTT_SAMPLE`] says
        // why), and the ns-2-style RTO gets the same floored value.
        self.rtt.on_sample(elapsed.saturating_sub(f.t_delay));
        if self.cfg.rto_rule == RtoRule::Ns2Tcp {
            if let Some(sample) = self.rtt.latest() {
                self.tcp_rtt.on_sample(sample);
            }
        }
        self.feedbacks += 1;
        self.x_recv = f64::from(f.x_recv);
        let p_prev = self.p;
        self.p = f.p.clamp(0.0, 1.0);
        let r = self.r().unwrap_or(1.0);
        let s = self.s();
        self.data_limited = self.covered_interval_data_limited(now, f.timestamp_echo, r);
        self.data_limited_reports += u64::from(self.data_limited);
        // The receive rate the bounds below double: `X_recv` itself (the thesis), or half of
        // RFC 5348 §4.3's `recv_limit`.
        let rx = match self.cfg.data_limited {
            DataLimitedRule::Thesis => {
                // The set is the last report alone, so that RFC 5348 §4.4's timer
                // (`nofeedback_rule = "rfc5348"`) halves the X_recv the thesis bounds X with.
                self.x_recv_set.clear();
                self.x_recv_set.push((now, self.x_recv));
                self.x_recv
            }
            DataLimitedRule::Rfc5348 => self.rfc5348_recv_limit(now, self.x_recv, p_prev) / 2.0,
        };
        self.recv_limit = 2.0 * rx;

        let initial = match self.cfg.initial_window {
            InitialWindow::OnePacket => s / r,
            InitialWindow::Rfc5348 => (4.0 * s).min((2.0 * s).max(4380.0)) / r,
        }
        // Never below `s/t_mbi` (RFC 5348 §4.3), which an RTT sample above `t_mbi` would give.
        .max(self.min_rate());
        if self.rtt.samples() == 1 && self.mode == Mode::Forced {
            // A send error before the first report: start from the initial window, but not in
            // slowstart.
            self.x = initial;
            self.climb = initial;
        } else if self.mode == Mode::InitRtt
            && (self.p <= 0.0 || self.cfg.slowstart_on_lossy_first_report)
        {
            // First RTT sample: slowstart begins (004 App. B), with a loss shown already too
            // under [`TfrcConfig::slowstart_on_lossy_first_report`].
            self.x = initial;
            self.climb = initial;
            self.mode = Mode::Slowstart;
            self.last_double = Some(now);
            self.double_rtt = r;
            self.last_change = Some(now);
        } else if self.p <= 0.0 && self.mode != Mode::Forced {
            // No loss yet: (re-)enter slowstart (004 Sec. 3.6.1: after a timer-ended
            // slowstart a loss-free report re-enters it) and double once per RTT.
            self.mode = Mode::Slowstart;
            // ns-2's `round_id`: reports and no-feedback expiries.
            let round = self.feedbacks.saturating_add(self.timeouts);
            let bound = 2.0 * rx;
            if self.cfg.slowstart_hold_second_report
                && round <= 2
                && self.cfg.initial_window != InitialWindow::OnePacket
            {
                // ns-2's second report: the initial window again, with the new RTT.
                let held = self.x.max(initial);
                self.x = held;
                self.climb = held;
                self.last_double = Some(now);
                self.double_rtt = r;
                self.last_change = Some(now);
            } else if self.cfg.slowstart_cut_to_receive_rate && self.x >= bound {
                // ns-2 bounds slowstart at every report, due or not: above `2·X_recv` to
                // `X_recv` (no `s/R` floor there), at it unchanged; no receive rate, `s/R`.
                let cut = if rx <= 0.0 {
                    Some(s / r)
                } else if self.x > bound {
                    Some(rx)
                } else {
                    None
                };
                if let Some(cut) = cut {
                    self.x = cut;
                    self.climb = cut;
                    self.last_change = Some(now);
                }
            } else {
                // The thesis doubles on every report (Eq. 3.13), reports coming once per RTT;
                // the guard only keeps early reports (a loss event's) from doubling again.
                // "One RTT" is the RTT at the last doubling: the receiver spaces its reports
                // by the RTT in the headers (its report timer, 004 Sec. 3.1), which is the
                // sender's RTT when those packets left, and in slowstart the smoothed RTT
                // grows with the queue, so the current one would make every other report miss
                // the doubling. ns-2 waits strictly more than the current RTT since the last
                // change ([`TfrcConfig::slowstart_strict_wait`]).
                let due = if self.cfg.slowstart_strict_wait {
                    self.last_change
                        .map_or(true, |t| now.saturating_since(t).as_secs_f64() > r)
                } else {
                    self.last_double.map_or(true, |t| {
                        now.saturating_since(t).as_secs_f64() >= self.double_rtt.min(r)
                    })
                };
                if due {
                    let doubled = match self.cfg.slowstart_bound {
                        // 004 Eq. 3.14–3.15.
                        SlowstartBound::Thesis => (self.x + self.x.min(rx)).max(s / r),
                        // RFC 3448 §4.3, ns-2.
                        SlowstartBound::TwiceReceiveRate => (2.0 * self.x).min(bound).max(s / r),
                        // RFC 5348 §4.3 step 4: the floor is the initial rate.
                        SlowstartBound::Rfc5348 => (2.0 * self.x).min(bound).max(initial),
                    };
                    // 004 Sec. 3.6.1: smoothed like the congestion-control increase, with
                    // slowstart's Δb (Eq. 3.14: the step the bound left, `doubled − X`).
                    let delta_b = (doubled - self.x).max(0.0);
                    self.set_rate(doubled, r, delta_b, delta_b);
                    self.last_double = Some(now);
                    self.double_rtt = r;
                    self.last_change = Some(now);
                }
            }
        } else {
            // Congestion control. In Forced mode a loss-free report does not re-enter
            // slowstart (004 Sec. 3.6.3); with `p = 0` the equation sets no bound and the
            // rate grows by the congestion-control rules only. The thesis discards such
            // reports outright, but with its two-loss slowstart exit a single unsent packet
            // would then freeze the rate for good; this reading keeps its intent (no
            // doubling) without the dead end.
            // The first report to show a loss ends ns-2's slowstart, also after a no-feedback
            // expiry that took tfcc's sender out of it (ns-2's stays in slowstart).
            // Slowstart mode with a loss already shown is
            // [`TfrcConfig::slowstart_on_lossy_first_report`]'s.
            let ends_slowstart = (self.mode == Mode::Slowstart
                || (self.mode == Mode::CongestionControl && p_prev <= 0.0))
                && self.p > 0.0;
            if self.p > 0.0 {
                self.mode = Mode::CongestionControl;
            }
            let x_calc = match self.cfg.rto_rule {
                RtoRule::RttMultiple => self.eq.rate_secs(s, r, self.p),
                RtoRule::Ns2Tcp => {
                    self.eq
                        .rate_with_rto(s, r, self.tcp_rtt.rto().as_secs_f64(), self.p)
                }
            };
            self.x_calc = Some(x_calc);
            let mut target = if self.cfg.receive_bound {
                // ns-2's `maximumrate = max(maxrate_, size_/rtt_)` with
                // [`TfrcConfig::receive_bound_floor`].
                let floor = if self.cfg.receive_bound_floor {
                    s / r
                } else {
                    0.0
                };
                x_calc.min((2.0 * rx).max(floor))
            } else {
                x_calc
            };
            // 004 Eq. 3.7: Δb = s/R; ns-2 scales it by the time since the last change.
            let elapsed = self
                .last_change
                .map_or(1.0, |t| now.saturating_since(t).as_secs_f64() / r);
            let delta_b = if self.cfg.increase_elapsed {
                s / r * elapsed.min(2.0)
            } else {
                s / r
            };
            // ns-2's slowstart exit sets the rate without touching `last_change_`, so the next
            // report's increase counts from slowstart's last change.
            if !ends_slowstart {
                self.last_change = Some(now);
            }
            let step_of = if self.cfg.increase_limit {
                if target > self.x {
                    // 004 Eq. 3.8: at most one more packet per RTT.
                    target = target.min(self.x + delta_b);
                }
                delta_b
            } else {
                (target - self.x).max(0.0)
            };
            self.set_rate(target, r, delta_b, step_of);
        }
        self.arm_nofeedback(now);
        self.slowstart_at = match (self.mode, self.rtt.latest()) {
            (Mode::Slowstart, Some(sample)) if self.cfg.slowstart_timer => {
                Some(now + sample.mul_f64(self.cfg.nofeedback_rtts / 2.0))
            }
            _ => None,
        };
        self.reschedule();
    }

    /// The no-feedback timer fired: halve the rate (004 Sec. 3.5.2) and end slowstart (Sec.
    /// 3.6.1: the slowstart timer ends it; a later loss-free report re-enters it).
    fn on_nofeedback(&mut self, now: Time) {
        self.timeouts += 1;
        match self.cfg.nofeedback_rule {
            NofeedbackRule::HalveRate => self.halve_rate(),
            NofeedbackRule::Rfc5348 => self.rfc5348_nofeedback(now),
        }
        self.arm_nofeedback(now);
    }

    fn halve_rate(&mut self) {
        self.x = (self.x / 2.0).max(self.min_rate());
        self.climb = self.x;
        if self.mode == Mode::Slowstart {
            self.mode = Mode::CongestionControl;
        }
    }

    /// RFC 5348 §4.4 step 1, in the RFC's order of cases.
    fn rfc5348_nofeedback(&mut self, now: Time) {
        let idle = !self.sent_since_nofeedback;
        let x_recv = self.x_recv_set_max();
        let recover = self.recover_rate();
        if self.rtt.samples() == 0 && self.feedbacks == 0 && !idle {
            self.halve_rate();
        } else if idle
            && ((self.p > 0.0 && x_recv < recover) || (self.p <= 0.0 && self.x < 2.0 * recover))
        {
            // Idle since the timer was set and already at or below the recovery rate: an
            // idle period alone never takes the rate below it.
        } else if self.p <= 0.0 {
            self.halve_rate();
        } else {
            let x_bps = self.x_calc.unwrap_or(f64::INFINITY);
            if x_bps > 2.0 * x_recv {
                self.update_limits(now, x_recv);
            } else {
                self.update_limits(now, x_bps / 2.0);
            }
            if self.mode == Mode::Slowstart {
                self.mode = Mode::CongestionControl;
            }
        }
    }
}

impl Endpoint for TfrcSender {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        if let Header::TfrcFeedback(f) = pkt.header {
            self.on_feedback(now, &f);
        }
    }

    fn on_timeout(&mut self, now: Time) {
        if let Some(t) = self.slowstart_at {
            if now >= t {
                // 004 Eq. 3.16: end slowstart, no halving; this timer is not re-armed.
                self.slowstart_at = None;
                if self.mode == Mode::Slowstart {
                    self.mode = Mode::CongestionControl;
                }
            }
        }
        if let Some(t) = self.nofeedback_at {
            if now >= t {
                self.on_nofeedback(now);
            }
        }
    }

    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if self.buffer.is_some_and(|b| b > 0) && self.waiting_since.is_none() {
            self.waiting_since = Some(now);
        }
        if now < self.next_send || !self.has_data() {
            return None;
        }
        let s = self.cfg.packet_size;
        let payload = match self.buffer {
            None => s,
            Some(b) => b.min(u64::from(s)) as u32,
        };
        // Not data-limited at this instant: the data was there before the packet was due
        // (a bulk source always is).
        if self.buffer.is_none() || self.waiting_since.is_some_and(|t| t < self.next_send) {
            self.note_not_limited(now);
        }
        if let Some(b) = &mut self.buffer {
            *b -= u64::from(payload);
            if *b == 0 {
                self.waiting_since = None;
            }
        }
        if self.packets_sent == 0 {
            // The initial `X_recv_set` entry's age counts from the first packet.
            for e in &mut self.x_recv_set {
                e.0 = now;
            }
        }
        self.sent_since_nofeedback = true;
        self.last_payload = payload;
        let h = DataHeader {
            seq: self.seq,
            timestamp: now,
            rtt: self.rtt.smoothed().unwrap_or(Dur::ZERO),
            rtt_sample: self.rtt.latest().unwrap_or(Dur::ZERO),
            rate: self.x.clamp(0.0, f64::from(u32::MAX)) as u32,
            mode: self.mode,
            // ns-2's `round_id`: +1 per report taken and per no-feedback expiry; the header
            // keeps 24 bits.
            round: (self.feedbacks.wrapping_add(self.timeouts) & u64::from(ROUND_MAX)) as u32,
        };
        self.seq += 1;
        self.packets_sent += 1;
        if self.x < self.climb {
            // One step of the smoothed increase per packet (004 Eq. 3.10).
            self.x = (self.x + self.climb_step).min(self.climb);
        }
        self.bytes_sent += u64::from(payload);
        self.last_send = Some(now);
        // Never back to back (004 Sec. 3.5.1): the next packet waits one gap from this one.
        self.next_send = now + self.gap_after(f64::from(payload.max(1)));
        if self.nofeedback_at.is_none() {
            self.nofeedback_at = Some(now + self.nofeedback_iv);
        }
        Some(Packet {
            // Headers ride on top of the `s` the rate is paced with (ns-2 `headersize_`).
            size: payload.saturating_add(self.cfg.header_size),
            header: Header::TfrcData(h),
        })
    }

    fn next_timeout(&self) -> Option<Time> {
        let timers = [self.nofeedback_at, self.slowstart_at]
            .into_iter()
            .flatten();
        if self.has_data() {
            Some(timers.fold(self.next_send, Time::min))
        } else {
            timers.min()
        }
    }

    fn stats(&self) -> Stats {
        Stats {
            rate: Some(self.x),
            p: Some(self.p),
            ali: (self.p > 0.0).then(|| 1.0 / self.p),
            rtt: self.rtt.smoothed(),
            rto: Some(self.nofeedback_iv),
            packets_sent: self.packets_sent,
            bytes_sent: self.bytes_sent,
            timeouts: self.timeouts,
            mode: self.mode.name(),
            ..Stats::default()
        }
    }
}

impl Sender for TfrcSender {
    fn buffered(&self) -> Option<u64> {
        TfrcSender::buffered(self)
    }
    /// `bytes_sent`: TFRC counts each packet's payload `s`, its header on top.
    fn payload_sent(&self) -> Option<u64> {
        Some(self.bytes_sent)
    }
    /// The packet just returned was not sent (004 Sec. 3.6.3). It is not retried: its sequence
    /// number stays used, so the receiver sees it as a loss. In slowstart (or before it) the
    /// sender knows that loss is coming and stops doubling at once: Forced Congestion Control,
    /// left when a report shows the loss. An application-limited sender's payload of that
    /// packet is gone from the send buffer too (offer it again to resend it).
    fn on_send_error(&mut self, _now: Time) {
        self.send_errors += 1;
        self.packets_sent = self.packets_sent.saturating_sub(1);
        self.bytes_sent = self.bytes_sent.saturating_sub(u64::from(self.last_payload));
        if matches!(self.mode, Mode::Slowstart | Mode::InitRtt) {
            self.mode = Mode::Forced;
        }
    }

    /// `None` makes the sender bulk (the default); `Some(bytes)` adds `bytes` to the send
    /// buffer (a bulk sender becomes application-limited with just these bytes), as the TCP
    /// sender's `offer` does. Sending resumes at the next [`Endpoint::poll_transmit`].
    fn offer(&mut self, bytes: Option<u64>) {
        if self.buffer.is_none() {
            self.waiting_since = None; // a bulk source's data never "arrives"
        }
        self.buffer = bytes.map(|b| self.buffer.unwrap_or(0).saturating_add(b));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    /// A report arriving at `now` whose RTT sample is `rtt_ms` (the echo is the first packet,
    /// sent at 0; the holding delay makes up the rest).
    fn feedback(s: &mut TfrcSender, now: Time, rtt_ms: u64, p: f64, x_recv: u32) {
        let f = FeedbackHeader {
            seq_echo: 0,
            timestamp_echo: Time::ZERO,
            t_delay: now.saturating_since(Time::ZERO) - Dur::from_millis(rtt_ms),
            x_recv,
            p,
        };
        s.on_packet(
            now,
            &Packet {
                size: 40,
                header: Header::TfrcFeedback(f),
            },
        );
    }

    /// A sender that has sent its first packet. The rules are checked one report at a time,
    /// so increases are taken when the report arrives; [`increases_are_spread_over_the_next_packets`]
    /// checks the thesis' per-packet smoothing.
    fn started(cfg: TfrcConfig) -> TfrcSender {
        let mut s = TfrcSender::new(TfrcConfig {
            smooth_increase: false,
            ..cfg
        });
        assert!(s.poll_transmit(Time::ZERO).is_some());
        s
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    /// The data header carries both RTTs: the smoothed one (the receiver's report timer and
    /// seed) and the latest sample, 004 Sec. 3.4's `t_RTT_cur` for grouping losses.
    #[test]
    fn the_header_carries_the_smoothed_rtt_and_the_latest_sample() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(300), 300, 0.0, 1460);
        feedback(&mut s, ms(2000), 1000, 0.0, 1460);
        let at = s.next_timeout().unwrap();
        let Header::TfrcData(h) = s.poll_transmit(at).unwrap().header else {
            panic!("not data")
        };
        assert_eq!(h.rtt_sample, Dur::from_millis(1000));
        // β = 0.05: 0.05·1000 + 0.95·300 = 335 ms.
        assert!((h.rtt.as_secs_f64() - 0.335).abs() < 1e-6, "{:?}", h.rtt);
    }

    #[test]
    fn init_rtt_probes_at_one_packet_per_second_never_back_to_back() {
        let mut s = started(TfrcConfig::default());
        assert_eq!(s.poll_transmit(Time::ZERO), None);
        assert_eq!(s.next_timeout(), Some(Time::from_secs(1)));
        assert_eq!(s.mode(), Mode::InitRtt);
        let p = s.poll_transmit(Time::from_secs(1)).unwrap();
        let Header::TfrcData(h) = p.header else {
            panic!("not data")
        };
        assert_eq!((h.seq, h.rate, h.mode), (1, 1460, Mode::InitRtt));
        assert_eq!(p.size, 1460);
    }

    /// A report whose holding delay is the whole time since the echoed packet left gives an
    /// RFC 5348 §4.3 `R_sample` of 0 (or below: `t_delay` longer than the round trip). The
    /// sender took it as it stood: the latest sample, and so the ISM factor, were 0 (a zero gap
    /// made `poll_transmit` return packets at one instant without end, found by
    /// `any_feedback_values_never_panic`), and a first such sample made the smoothed RTT 0. The
    /// sample is now raised to `min_rtt_sample` (1 µs): neither estimate is ever 0, and packets
    /// are never back to back (004 Sec. 3.5.1).
    #[test]
    fn an_rtt_sample_of_zero_or_less_is_floored_at_min_rtt_sample() {
        let report = |s: &mut TfrcSender, now: Time, t_delay: Dur| {
            let f = FeedbackHeader {
                seq_echo: 0,
                timestamp_echo: Time::ZERO,
                t_delay,
                x_recv: 100_000,
                p: 0.0,
            };
            s.on_packet(
                now,
                &Packet {
                    size: 40,
                    header: Header::TfrcFeedback(f),
                },
            );
        };
        let floor = TfrcConfig::default().min_rtt_sample;
        assert_eq!(floor, Dur::from_micros(1));
        // A first sample of 0: the smoothed RTT starts at the floor, not at 0.
        let mut first = started(TfrcConfig::default());
        report(&mut first, ms(100), Dur::from_millis(100));
        assert_eq!(first.rtt().smoothed(), Some(floor));
        assert_eq!(first.rtt().latest(), Some(floor));
        assert_eq!(first.rtt().floored_samples(), 1);
        assert!(first.stats().rtt.is_some_and(|r| r > Dur::ZERO));

        let mut s = started(TfrcConfig::default());
        assert!(s.config().ism);
        report(&mut s, ms(100), Dur::ZERO); // a 100 ms sample
        report(&mut s, ms(200), Dur::from_millis(200)); // a 0 ms sample
        assert_eq!(s.rtt().latest(), Some(floor));
        report(&mut s, ms(300), Dur::from_secs(3600)); // "negative": t_delay > elapsed
        assert_eq!(s.rtt().latest(), Some(floor));
        assert_eq!(s.rtt().floored_samples(), 2);
        // The EWMA moved by β·(floor − R) per bad sample: 0.95² of 100 ms plus a little.
        let r = s.rtt().smoothed().unwrap();
        assert!(
            r > Dur::from_millis(90) && r < Dur::from_millis(91),
            "{r:?}"
        );
        assert!(s.packet_gap() >= Dur(1), "{:?}", s.packet_gap());
        let burst = std::iter::from_fn(|| s.poll_transmit(ms(300)))
            .take(10)
            .count();
        assert_eq!(burst, 1, "never back to back (004 Sec. 3.5.1)");
        // The floor is a config field a scenario can set (e.g. Linux CCID-3's 100 µs).
        let mut linux = started(TfrcConfig {
            min_rtt_sample: Dur::from_micros(100),
            ..TfrcConfig::default()
        });
        report(&mut linux, ms(100), Dur::from_millis(100));
        assert_eq!(linux.rtt().smoothed(), Some(Dur::from_micros(100)));
        let bad = TfrcConfig {
            min_rtt_sample: Dur::ZERO,
            ..TfrcConfig::default()
        };
        assert!(bad.validate().is_err());
    }

    /// The initial window `s/R` after a first RTT sample longer than `t_mbi` (64 s) stays at
    /// the floor `s/t_mbi` (RFC 5348 §4.3) instead of falling under it.
    #[test]
    fn the_initial_window_never_falls_below_s_over_t_mbi() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, Time::from_secs(65), 65_000, 0.0, 0);
        let floor = 1460.0 / 64.0;
        assert!(s.rate() >= floor, "{} < {floor}", s.rate());
    }

    #[test]
    fn ns2_packets_carry_headers_on_top_of_the_paced_size() {
        let mut s = TfrcSender::new(TfrcConfig::ns2());
        let p = s.poll_transmit(Time::ZERO).unwrap();
        assert_eq!(p.size, 1032); // packetSize_ 1000 + headersize_ 32
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // RFC 3390 window of 4 packets of s = 1000 B per 100 ms RTT: the gap is s/X = 25 ms,
        // computed with the payload size, not the 1032 wire bytes.
        assert!(close(s.rate(), 40_000.0, 1e-12), "{}", s.rate());
        assert_eq!(s.next_timeout(), Some(ms(25)));
        assert_eq!(s.stats().bytes_sent, 1000);
    }

    #[test]
    fn slowstart_doubles_on_a_report_one_rtt_later_while_the_rtt_grows() {
        // Reports one RTT apart (the receiver's report timer, by the RTT in the headers) while
        // the queue builds: the second report's 200 ms sample lifts the smoothed RTT to 105 ms,
        // but it comes one RTT (100 ms, as at the last doubling) after the first, so it doubles.
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        assert!(close(s.rate(), 14_600.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(200), 200, 0.0, 1_000_000);
        assert!(close(s.rate(), 29_200.0, 1e-9), "{}", s.rate()); // 004 Eq. 3.14-3.15
                                                                  // An early report (a loss event's, 50 ms later) does not double again.
        feedback(&mut s, ms(250), 100, 0.0, 1_000_000);
        assert!(close(s.rate(), 29_200.0, 1e-9), "{}", s.rate());
    }

    #[test]
    fn first_report_starts_slowstart_at_one_packet_per_rtt() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        assert_eq!(s.mode(), Mode::Slowstart);
        assert!(close(s.rate(), 14_600.0, 1e-9), "{}", s.rate()); // 1460 B / 0.1 s
                                                                  // The next packet goes one new gap after the first, not at the 1 s probe time.
        assert_eq!(s.next_timeout(), Some(ms(100)));
        // RFC 5348 §4.2: min(4s, max(2s, 4380 B)) = 4380 B per RTT at s = 1460.
        let mut r = started(TfrcConfig {
            initial_window: super::super::config::InitialWindow::Rfc5348,
            ..TfrcConfig::default()
        });
        feedback(&mut r, ms(100), 100, 0.0, 0);
        assert!(close(r.rate(), 43_800.0, 1e-9));
    }

    #[test]
    fn slowstart_doubles_once_per_rtt_bounded_by_the_receive_rate() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        feedback(&mut s, ms(200), 100, 0.0, 1_000_000);
        assert!(close(s.rate(), 29_200.0, 1e-9));
        feedback(&mut s, ms(250), 100, 0.0, 1_000_000); // same RTT: no second doubling
        assert!(close(s.rate(), 29_200.0, 1e-9));
        // 004 Eq. 3.14-3.15: X + min(X, X_recv) = 29 200 + 5 000.
        feedback(&mut s, ms(300), 100, 0.0, 5_000);
        assert!(close(s.rate(), 34_200.0, 1e-9));
        // RFC 3448 §4.3: max(min(2X, 2·X_recv), s/R) = max(8 000, 10 000) (ns-2's own
        // bound is under_ns2_a_slowstart_rate_above_twice_the_receive_rate_drops_to_it's).
        let mut r = started(TfrcConfig {
            initial_window: super::super::config::InitialWindow::OnePacket,
            slowstart_strict_wait: false,
            slowstart_cut_to_receive_rate: false,
            ..TfrcConfig::ns2()
        });
        feedback(&mut r, ms(100), 100, 0.0, 0);
        assert!(close(r.rate(), 10_000.0, 1e-9)); // s = 1000
        feedback(&mut r, ms(200), 100, 0.0, 4_000);
        assert!(close(r.rate(), 10_000.0, 1e-9));
        feedback(&mut r, ms(300), 100, 0.0, 1_000_000);
        assert!(close(r.rate(), 20_000.0, 1e-9));
    }

    /// ns-2.35's `slowstart()` keeps the initial window at `round_id == 2` when that window
    /// is above one packet, so the first doubling comes at the third report at the earliest;
    /// `round_id` counts no-feedback expiries too. ns2 preset: s = 1000 B, RFC 3390 window of
    /// 4000 B, R = 100 ms.
    #[test]
    fn under_ns2_the_second_report_holds_the_initial_window() {
        let run = |cfg: TfrcConfig| {
            let mut s = started(cfg);
            feedback(&mut s, ms(100), 100, 0.0, 0);
            assert!(close(s.rate(), 40_000.0, 1e-9), "{}", s.rate());
            feedback(&mut s, ms(210), 100, 0.0, 1_000_000);
            let second = s.rate();
            feedback(&mut s, ms(320), 100, 0.0, 1_000_000);
            (second, s.rate())
        };
        let (second, third) = run(TfrcConfig::ns2());
        assert!(close(second, 40_000.0, 1e-9), "{second}");
        assert!(close(third, 80_000.0, 1e-9), "{third}");
        // Off: the second report doubles.
        let (second, _) = run(TfrcConfig {
            slowstart_hold_second_report: false,
            ..TfrcConfig::ns2()
        });
        assert!(close(second, 80_000.0, 1e-9), "{second}");
        // An expiry counts as a round: the halved rate (20 000) doubles at the next report,
        // bounded by 2·X_recv = 30 000, instead of going back to the initial window.
        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        s.on_timeout(ms(300)); // max(2R, 2s/X) after the report
        assert!(close(s.rate(), 20_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(350), 100, 0.0, 15_000);
        assert!(close(s.rate(), 30_000.0, 1e-9), "{}", s.rate());
    }

    /// ns-2.35's `slowstart()` doubles only when `now - last_change_ > rtt_`, strictly and
    /// with the current smoothed RTT; tfcc's own rule doubles a report one RTT (the RTT at the
    /// last doubling) after the last doubling while the queue lifts the smoothed RTT.
    #[test]
    fn under_ns2_a_doubling_waits_more_than_the_current_rtt_since_the_last_change() {
        let run = |cfg: TfrcConfig| {
            let mut s = started(cfg);
            feedback(&mut s, ms(100), 100, 0.0, 0);
            feedback(&mut s, ms(200), 100, 0.0, 1_000_000); // held: 40 000
                                                            // 100 ms after the last change, the smoothed RTT now 105 ms.
            feedback(&mut s, ms(300), 200, 0.0, 1_000_000);
            let at_one_rtt = s.rate();
            // 110 ms after it, the smoothed RTT 104.75 ms.
            feedback(&mut s, ms(310), 100, 0.0, 1_000_000);
            (at_one_rtt, s.rate())
        };
        let (at_one_rtt, later) = run(TfrcConfig::ns2());
        assert!(close(at_one_rtt, 40_000.0, 1e-9), "{at_one_rtt}");
        assert!(close(later, 80_000.0, 1e-9), "{later}");
        let (at_one_rtt, later) = run(TfrcConfig {
            slowstart_strict_wait: false,
            ..TfrcConfig::ns2()
        });
        assert!(close(at_one_rtt, 80_000.0, 1e-9), "{at_one_rtt}");
        assert!(close(later, 80_000.0, 1e-9), "{later}");
    }

    /// ns-2.35's `slowstart()`: a rate above `ss_maxrate_ = 2·X_recv` drops to `X_recv` at
    /// every report, a doubling due or not, without the `s/R` floor; no receive rate gives
    /// `s/R`. Without the rule the bound applies only when a doubling is due, as `2·X_recv`.
    #[test]
    fn under_ns2_a_slowstart_rate_above_twice_the_receive_rate_drops_to_it() {
        let run = |cfg: TfrcConfig| {
            let mut s = started(cfg);
            feedback(&mut s, ms(100), 100, 0.0, 0);
            feedback(&mut s, ms(200), 100, 0.0, 1_000_000); // held: 40 000
            feedback(&mut s, ms(250), 100, 0.0, 10_000); // not due; 2·X_recv = 20 000
            let not_due = s.rate();
            feedback(&mut s, ms(400), 100, 0.0, 3_000); // due; 2·X_recv = 6 000
            let due = s.rate();
            feedback(&mut s, ms(450), 100, 0.0, 1_500); // at 2·X_recv: unchanged
            let at_bound = s.rate();
            feedback(&mut s, ms(500), 100, 0.0, 0);
            (not_due, due, at_bound, s.rate())
        };
        let (not_due, due, at_bound, none) = run(TfrcConfig::ns2());
        assert!(close(not_due, 10_000.0, 1e-9), "{not_due}");
        assert!(close(due, 3_000.0, 1e-9), "{due}");
        assert!(close(at_bound, 3_000.0, 1e-9), "{at_bound}");
        assert!(close(none, 10_000.0, 1e-9), "{none}"); // s/R
        let (not_due, due, _, _) = run(TfrcConfig {
            slowstart_cut_to_receive_rate: false,
            ..TfrcConfig::ns2()
        });
        assert!(close(not_due, 40_000.0, 1e-9), "{not_due}");
        assert!(close(due, 10_000.0, 1e-9), "{due}"); // max(min(80 000, 6 000), s/R)
    }

    /// ns-2.35's `recv()` calls `slowstart()` for the first report whatever its loss rate, so
    /// a first report that shows a loss sets the initial window and the next lossy report ends
    /// slowstart (leaving `last_change`, so the increase after it counts from the first
    /// report). p = 0.0001 keeps `X_calc` far above the rates here.
    #[test]
    fn under_ns2_a_lossy_first_report_starts_slowstart() {
        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0001, 0);
        assert_eq!(s.mode(), Mode::Slowstart);
        assert!(close(s.rate(), 40_000.0, 1e-9), "{}", s.rate());
        // The exit: 40 000 + (s/R)·min(2, 100 ms/R).
        feedback(&mut s, ms(200), 100, 0.0001, 1_000_000);
        assert_eq!(s.mode(), Mode::CongestionControl);
        assert!(close(s.rate(), 50_000.0, 1e-9), "{}", s.rate());
        // Δt from the first report, 250 ms: capped at 2·s/R.
        feedback(&mut s, ms(350), 100, 0.0001, 1_000_000);
        assert!(close(s.rate(), 70_000.0, 1e-9), "{}", s.rate());
        let mut s = started(TfrcConfig {
            slowstart_on_lossy_first_report: false,
            ..TfrcConfig::ns2()
        });
        feedback(&mut s, ms(100), 100, 0.0001, 0);
        assert_eq!(s.mode(), Mode::CongestionControl);
    }

    #[test]
    fn rfc5348_slowstart_never_falls_below_the_initial_rate() {
        // RFC 5348 §4.3 step 4: X = max(min(2X, recv_limit), W_init/R); RFC 3448 (and ns-2)
        // floor it at s/R. A report 300 ms after the first (R = 100 ms, so X_recv_set holds
        // only its 4000 B/s) bounds 2X by recv_limit = 8000 B/s.
        let run = |bound| {
            let mut s = started(TfrcConfig {
                slowstart_bound: bound,
                ..TfrcConfig::rfc5348()
            });
            feedback(&mut s, ms(100), 100, 0.0, 0);
            assert!(close(s.rate(), 43_800.0, 1e-9), "{}", s.rate()); // 4380 B / 0.1 s
            feedback(&mut s, ms(400), 100, 0.0, 4_000);
            s.rate()
        };
        assert!(close(run(SlowstartBound::Rfc5348), 43_800.0, 1e-9));
        assert!(close(run(SlowstartBound::TwiceReceiveRate), 14_600.0, 1e-9));
        assert_eq!(
            TfrcConfig::rfc5348().slowstart_bound,
            SlowstartBound::Rfc5348
        );
        assert_eq!(
            TfrcConfig::ns2().slowstart_bound,
            SlowstartBound::TwiceReceiveRate
        );
    }

    #[test]
    fn congestion_control_follows_the_equation_capped_by_twice_the_receive_rate() {
        let cfg = TfrcConfig {
            increase_limit: false,
            receive_bound: true,
            ..TfrcConfig::default()
        };
        let mut s = started(cfg.clone());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // Spec 004 §2.2: 11.23 packets per RTT at p = 1 %, b = 1, t_RTO = 4R.
        feedback(&mut s, ms(200), 100, 0.01, 10_000_000);
        assert_eq!(s.mode(), Mode::CongestionControl);
        assert!(close(s.rate(), 11.23 * 14_600.0, 5e-4), "{}", s.rate());
        feedback(&mut s, ms(300), 100, 0.1, 10_000_000); // 1.77 packets per RTT at 10 %
        assert!(close(s.rate(), 1.77 * 14_600.0, 5e-3), "{}", s.rate());
        feedback(&mut s, ms(400), 100, 0.01, 50_000);
        assert!(close(s.rate(), 100_000.0, 1e-9));
    }

    #[test]
    fn the_thesis_increase_limit_adds_one_packet_per_rtt_and_decreases_at_once() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // Slowstart ends at 14 600 B/s; X_calc (11.23 packets per RTT at 1 %) is above it, so
        // the rate rises by one packet per RTT only (004 Eq. 3.7-3.8).
        feedback(&mut s, ms(200), 100, 0.01, 20_000);
        assert!(close(s.rate(), 29_200.0, 1e-9));
        feedback(&mut s, ms(300), 100, 0.01, 10_000_000);
        assert!(close(s.rate(), 43_800.0, 1e-9));
        // The receive rate does not bound congestion control (004 Sec. 3.5; RFC 5348's
        // 2·X_recv = 20 000 would cut the rate here).
        feedback(&mut s, ms(400), 100, 0.01, 10_000);
        assert!(close(s.rate(), 58_400.0, 1e-9));
        feedback(&mut s, ms(500), 100, 0.1, 10_000_000); // 1.77 pkt/RTT: straight down
        assert!(close(s.rate(), 1.77 * 14_600.0, 5e-3));
        feedback(&mut s, ms(600), 100, 0.1, 10_000_000);
        assert!(close(s.rate(), 1.77 * 14_600.0, 5e-3));
        // With RFC 5348's bound, the same report of 10 000 B/s cuts to 2·X_recv at once.
        let mut s = started(TfrcConfig {
            receive_bound: true,
            ..TfrcConfig::default()
        });
        feedback(&mut s, ms(100), 100, 0.0, 0);
        feedback(&mut s, ms(200), 100, 0.01, 20_000);
        feedback(&mut s, ms(300), 100, 0.01, 10_000_000);
        feedback(&mut s, ms(400), 100, 0.01, 10_000);
        assert!(close(s.rate(), 20_000.0, 1e-9));
    }

    /// ns-2.35's `maximumrate = max(maxrate_, size_/rtt_)`: a report of one packet per second
    /// (ns-2's repeated timer report) bounds the `ns2` sender at one packet per RTT, `s/R` =
    /// 10 000 B/s here, not at `2·X_recv` = 2000 B/s.
    #[test]
    fn under_ns2_the_receive_bound_never_falls_below_one_packet_per_rtt() {
        let run = |floor: bool| {
            let mut s = started(TfrcConfig {
                receive_bound_floor: floor,
                ..TfrcConfig::ns2()
            });
            feedback(&mut s, ms(100), 100, 0.0, 0);
            feedback(&mut s, ms(200), 100, 1e-6, 1000);
            s.rate()
        };
        assert!(TfrcConfig::ns2().receive_bound_floor);
        assert!(close(run(true), 10_000.0, 1e-9), "{}", run(true));
        assert!(close(run(false), 2_000.0, 1e-9), "{}", run(false));
    }

    /// ns-2.35's `increase_rate`: `X + (s/R)·min(2, Δt/R)`, `Δt` since the last report's
    /// change. From 10 000 B/s (`s/R`, R = 0.1 s) a report 0.2 s later adds two packets per
    /// RTT, one 0.05 s after that half a packet; the thesis' limit adds one each time.
    #[test]
    fn under_ns2_an_increase_is_scaled_by_the_time_since_the_last_change() {
        let run = |elapsed: bool| {
            let mut s = started(TfrcConfig {
                increase_elapsed: elapsed,
                ..TfrcConfig::ns2()
            });
            feedback(&mut s, ms(100), 100, 0.0, 0);
            feedback(&mut s, ms(200), 100, 1e-6, 1000); // down to s/R
            feedback(&mut s, ms(400), 100, 1e-6, 10_000_000);
            let first = s.rate();
            feedback(&mut s, ms(450), 100, 1e-6, 10_000_000);
            (first, s.rate())
        };
        assert!(TfrcConfig::ns2().increase_limit && TfrcConfig::ns2().increase_elapsed);
        let (a, b) = run(true);
        assert!(
            close(a, 30_000.0, 1e-9) && close(b, 35_000.0, 1e-9),
            "{a} {b}"
        );
        let (a, b) = run(false);
        assert!(
            close(a, 20_000.0, 1e-9) && close(b, 30_000.0, 1e-9),
            "{a} {b}"
        );
    }

    /// ns-2.35 sets `last_change_` at slowstart's doublings but not at the report that ends
    /// slowstart, so the first increase after it counts `Δt` from the last doubling. R = 0.1
    /// s, s/R = 10 000 B/s: slowstart from 0.1 s, the initial window held at 0.2 s, a doubling
    /// at 0.31 s, the exit at 0.41 s (down to `s/R`), then a report 0.05 s later adds
    /// `1.5·s/R` (0.15 s since the doubling); from
    /// the exit it would be `0.5·s/R`, from slowstart's start `2·s/R`. After a return to
    /// slowstart (a no-feedback halving, then a loss-free report that doubles) the same holds:
    /// 0.12 s after that doubling, `1.2·s/R`. And when the report after the expiry is the
    /// first to show a loss, it ends slowstart as ns-2's does (ns-2 stays in slowstart through
    /// an expiry): the next increase counts from slowstart's start, capped at `2·s/R`.
    #[test]
    fn under_ns2_the_first_increase_after_slowstart_counts_from_its_last_doubling() {
        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        feedback(&mut s, ms(200), 100, 0.0, 10_000_000); // holds the initial window
        feedback(&mut s, ms(310), 100, 0.0, 10_000_000);
        assert!(close(s.rate(), 80_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(410), 100, 1e-6, 1000);
        assert_eq!(s.mode(), Mode::CongestionControl);
        assert!(close(s.rate(), 10_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(460), 100, 1e-6, 10_000_000);
        assert!(close(s.rate(), 25_000.0, 1e-9), "{}", s.rate());

        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        s.on_timeout(ms(1000)); // no feedback for 2R: halved, out of slowstart
        assert_eq!(s.mode(), Mode::CongestionControl);
        feedback(&mut s, ms(1100), 100, 0.0, 10_000_000);
        assert_eq!(s.mode(), Mode::Slowstart);
        assert!(close(s.rate(), 40_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(1150), 100, 1e-6, 1000);
        assert!(close(s.rate(), 10_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(1220), 100, 1e-6, 10_000_000);
        assert!(close(s.rate(), 22_000.0, 1e-9), "{}", s.rate());

        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        s.on_timeout(ms(1000));
        feedback(&mut s, ms(1100), 100, 1e-6, 1000);
        assert!(close(s.rate(), 10_000.0, 1e-9), "{}", s.rate());
        feedback(&mut s, ms(1150), 100, 1e-6, 10_000_000);
        assert!(close(s.rate(), 30_000.0, 1e-9), "{}", s.rate());
    }

    /// 004 Sec. 3.5.2: "As soon as receiver reports arrive at the sender again, the sending
    /// rate can be readjusted to the rate expected by the receiver." The first report after a
    /// stall measures its receive rate over the silent interval (one packet in 3 s); the thesis
    /// sender takes the equation's rate, RFC 5348's would fall to 2·X_recv (E12, Sec. 4.9).
    #[test]
    fn after_a_stall_the_thesis_sender_returns_to_the_expected_rate() {
        let run = |receive_bound: bool| {
            let mut s = started(TfrcConfig {
                receive_bound,
                ..TfrcConfig::default()
            });
            feedback(&mut s, ms(100), 100, 0.0, 0);
            let mut t = 200;
            for _ in 0..40 {
                feedback(&mut s, ms(t), 100, 0.01, 10_000_000);
                t += 100;
            }
            let before = s.rate();
            // 11.23 packets per RTT at p = 1 % (spec 004 §2.2), reached one packet at a time.
            assert!(close(before, 11.23 * 14_600.0, 5e-4), "{before}");
            feedback(&mut s, ms(t + 3000), 100, 0.01, 1460 / 3);
            s.rate() / before
        };
        assert!(close(run(false), 1.0, 1e-9));
        assert!(run(true) < 0.01);
    }

    #[test]
    fn increases_are_spread_over_the_next_packets() {
        let mut s = TfrcSender::new(TfrcConfig {
            increase_limit: false,
            receive_bound: true,
            ..TfrcConfig::default()
        });
        assert!(s.poll_transmit(Time::ZERO).is_some());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        feedback(&mut s, ms(200), 100, 0.0001, 73_000);
        // 14 600 B/s is one packet per RTT, not above it: the whole step at once (Sec. 3.5.1).
        assert!(close(s.rate(), 146_000.0, 1e-9));
        assert!(s.poll_transmit(ms(200)).is_some());
        assert!(close(s.rate(), 146_000.0, 1e-9));
        // Up to 2·X_recv = 200 000: n_RTT = 146 000·0.1/2920 + 0.5 = 5.5, so
        // Δb_P = 54 000/5.5 per packet, reaching the target with the 6th packet.
        feedback(&mut s, ms(300), 100, 0.0001, 100_000);
        let mut t = ms(300);
        let mut rates = Vec::new();
        for _ in 0..7 {
            t = s.next_timeout().unwrap().max(t);
            assert!(s.poll_transmit(t).is_some());
            rates.push(s.rate());
        }
        assert!(
            close(rates[0], 146_000.0 + 54_000.0 / 5.5, 1e-9),
            "{rates:?}"
        );
        assert!(close(rates[4], 146_000.0 + 5.0 * 54_000.0 / 5.5, 1e-9));
        assert!(close(rates[5], 200_000.0, 1e-12));
        assert!(close(rates[6], 200_000.0, 1e-12));
        // A decrease is immediate.
        feedback(&mut s, t, 100, 0.0001, 50_000);
        assert!(close(s.rate(), 100_000.0, 1e-12));
    }

    /// Polls the packets due from `t` on, `n` of them, and returns the rate after each.
    fn rates_after_packets(s: &mut TfrcSender, mut t: Time, n: usize) -> Vec<f64> {
        let mut rates = Vec::new();
        for _ in 0..n {
            t = s.next_timeout().unwrap().max(t);
            assert!(s.poll_transmit(t).is_some());
            rates.push(s.rate());
        }
        rates
    }

    /// 004 Sec. 3.6.1: "Like normal rate increase, slowstart increase is done smoothly by
    /// adjusting the inter-packet spacing over the number of packets sent during the next
    /// RTT." Eq. 3.9 with slowstart's `Δb = min(b_act, b_rep)` (Eq. 3.14) gives `n_RTT =
    /// (X + Δb)/2 · R/s`: doubling 58 400 B/s at R = 0.1 s is `n_RTT = 4` steps of 14 600 B/s.
    /// The congestion-control form `X·R/(2s) + 1/2` (2.5 steps of 23 360 B/s, the rule before
    /// 2026-11-26) would reach 116 800 with the 3rd packet.
    #[test]
    fn slowstart_spreads_a_doubling_over_the_packets_of_one_rtt() {
        let mut s = TfrcSender::new(TfrcConfig::default());
        assert!(s.poll_transmit(Time::ZERO).is_some());
        feedback(&mut s, ms(100), 100, 0.0, 10_000_000);
        assert!(close(s.rate(), 14_600.0, 1e-12)); // one packet per RTT
        feedback(&mut s, ms(200), 100, 0.0, 10_000_000);
        assert!(close(s.rate(), 29_200.0, 1e-12)); // from one packet per RTT: at once
        feedback(&mut s, ms(300), 100, 0.0, 10_000_000);
        // n_RTT = (29 200 + 29 200)/2 · 0.1/1460 = 2 steps of 14 600.
        let rates = rates_after_packets(&mut s, ms(300), 2);
        assert!(close(rates[0], 43_800.0, 1e-12), "{rates:?}");
        assert!(close(rates[1], 58_400.0, 1e-12), "{rates:?}");
        feedback(&mut s, ms(400), 100, 0.0, 10_000_000);
        assert_eq!(s.mode(), Mode::Slowstart);
        let rates = rates_after_packets(&mut s, ms(400), 5);
        let want = [73_000.0, 87_600.0, 102_200.0, 116_800.0, 116_800.0];
        for (got, want) in rates.iter().zip(want) {
            assert!(close(*got, want, 1e-12), "{rates:?}");
        }
    }

    /// 004 Eq. 3.10: `Δb_P = Δb/max(n_RTT, 1)`, "the total increase `Δb` over the number of
    /// packets `n_RTT`", with `b_act = min(b_act + Δb, b_exp)` (Eq. 3.8). When `b_exp` is only
    /// `Δb/2` above the rate, the steps are still `Δb/n_RTT` and reach it sooner: from 29 200
    /// B/s at R = 0.1 s, `n_RTT = 1.5` and one step of 9 733 B/s reaches 36 500. Dividing the
    /// step actually taken (7 300, the rule before 2026-11-26) would take two packets.
    #[test]
    fn a_partial_increase_is_delta_b_over_n_rtt_capped_by_the_expected_rate() {
        let cfg = TfrcConfig::default();
        let eq = cfg.equation();
        let mut s = TfrcSender::new(cfg);
        assert!(s.poll_transmit(Time::ZERO).is_some());
        feedback(&mut s, ms(100), 100, 0.0, 10_000_000);
        // p = 1 %: X_calc is 11.23 packets per RTT, so X rises by Δb = 14 600 at once (X was
        // one packet per RTT).
        feedback(&mut s, ms(200), 100, 0.01, 10_000_000);
        assert!(close(s.rate(), 29_200.0, 1e-12));
        let p = eq.loss_for_rate(1460, Dur::from_millis(100), 36_500.0);
        feedback(&mut s, ms(300), 100, p, 10_000_000);
        let target = s.x_calc().unwrap();
        assert!(close(target, 36_500.0, 1e-6), "{target}");
        let rates = rates_after_packets(&mut s, ms(300), 2);
        assert!(close(rates[0], target, 1e-12), "{rates:?}");
        assert!(close(rates[1], target, 1e-12), "{rates:?}");
    }

    /// 004 Sec. 3.5.1 smooths an increase only "whenever the sending rate is higher than one
    /// packet per RTT". A sender that collapsed to a few bytes per second (the testbed trace in
    /// docs/reproductions/log/tfrc.md: `p` 0.81, `X` 119 B/s) takes the next report's increase at
    /// once, Eq. 3.8's `min(X + s/R, b_exp)`, and its next packet is due at the new rate.
    #[test]
    fn below_one_packet_per_rtt_an_increase_is_taken_when_the_report_arrives() {
        let cfg = TfrcConfig::default();
        assert!(cfg.smooth_increase);
        let mut s = TfrcSender::new(cfg);
        assert!(s.poll_transmit(Time::ZERO).is_some());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        assert!(s.poll_transmit(ms(100)).is_some());
        // p = 0.9: the equation's rate is far below one packet per RTT (14 600 B/s here). The
        // packet already due at 200 ms leaves; the next is not due before 1460/X > 1 s later.
        feedback(&mut s, ms(200), 100, 0.9, 10_000_000);
        let low = s.rate();
        assert!(low < 1_460.0, "{low}");
        assert!(s.poll_transmit(ms(200)).is_some());
        assert!(s.poll_transmit(ms(399)).is_none());
        // A report of p = 1 %: X_calc is 11.23 packets per RTT, so X rises by Δb = s/R at once
        // (Eq. 3.7-3.8), and a packet is due at once: 1460/X < 0.1 s have passed since the last.
        feedback(&mut s, ms(400), 100, 0.01, 10_000_000);
        assert!(close(s.rate(), low + 14_600.0, 1e-9), "{}", s.rate());
        assert!(s.poll_transmit(ms(400)).is_some());
    }

    #[test]
    fn the_slowstart_timer_ends_slowstart_and_the_nofeedback_timer_halves() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // 004 Eq. 3.12 with d = 8: 8·max(0.1 s, 1460/14600 s) = 0.8 s after the report.
        assert_eq!(s.stats().rto, Some(Dur::from_millis(800)));
        s.on_timeout(ms(499)); // early: no-op
        assert_eq!(s.mode(), Mode::Slowstart);
        // 004 Eq. 3.16: the slowstart timer, (8/2)·0.1 s after the report, ends slowstart
        // without halving.
        s.on_timeout(ms(500));
        assert_eq!(s.mode(), Mode::CongestionControl);
        s.on_timeout(ms(899));
        assert!(close(s.rate(), 14_600.0, 1e-9));
        s.on_timeout(ms(900));
        assert!(close(s.rate(), 7_300.0, 1e-9));
        assert_eq!(s.mode(), Mode::CongestionControl);
        assert_eq!(s.stats().timeouts, 1);
        // Now s/X = 0.2 s, so the next expiry is 1.6 s later.
        assert_eq!(s.stats().rto, Some(Dur::from_millis(1600)));
        // Halving stops at s/t_mbi = 1460/64 B/s.
        for k in 0..40 {
            s.on_timeout(Time::from_secs(10 + 100 * k));
        }
        assert!(close(s.rate(), 1460.0 / 64.0, 1e-9));
        // A loss-free report re-enters slowstart (004 Sec. 3.6.1).
        feedback(&mut s, Time::from_secs(5000), 100, 0.0, 1_000_000);
        assert_eq!(s.mode(), Mode::Slowstart);
    }

    #[test]
    fn the_ns2_rto_rule_uses_srtt_plus_four_rttvar_in_tenth_second_ticks() {
        // A 100 ms sample is one 0.1 s tick: SRTT = 1, RTTVAR = 1/2 tick, RTO = 1 + 4·½ = 3
        // ticks = 0.3 s (where 4R = 0.4 s).
        let cfg = TfrcConfig::ns2();
        let eq = cfg.equation();
        let mut s = started(cfg);
        feedback(&mut s, ms(100), 100, 0.0, 0);
        feedback(&mut s, ms(200), 100, 0.1, 10_000_000);
        let want = eq.rate_with_rto(1000.0, 0.1, 0.3, 0.1);
        assert!(close(s.rate(), want, 1e-12), "{} vs {want}", s.rate());
        // f(p) = sqrt(2p/3) + k·3·sqrt(3p/8)·p·(1 + 32p²): 0.4883 at k = 3, 0.5649 at k = 4.
        let ratio = want / eq.rate_secs(1000.0, 0.1, 0.1);
        assert!((ratio - 0.5649 / 0.4883).abs() < 1e-3, "{ratio}");
    }

    #[test]
    fn rfc_nofeedback_interval_is_max_of_four_rtts_and_two_packets() {
        let mut s = started(TfrcConfig::rfc5348());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // X = 4380 B / 0.1 s = 43 800 B/s: max(0.4 s, 2·1460/43800 s) = 0.4 s.
        assert_eq!(s.stats().rto, Some(Dur::from_millis(400)));
    }

    /// ns-2.35's `Agent/TFRC` re-arms its no-feedback timer at `max(2·rtt_, 2·size_/rate_)`,
    /// half RFC 5348's `4R`; at S1's 165 ms RTT and a packet per RTT that is the difference
    /// between a timer that fires on one lost report and one that needs two.
    #[test]
    fn ns2_nofeedback_interval_is_max_of_two_rtts_and_two_packets() {
        let mut s = started(TfrcConfig::ns2());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        // X = 4000 B / 0.1 s = 40 000 B/s: max(0.2 s, 2·1000/40000 s) = 0.2 s.
        assert_eq!(s.stats().rto, Some(Dur::from_millis(200)));
        // At 5000 B/s (p = 0.3 at R = 0.1 s gives less) the packet term rules: 2·1000/X.
        feedback(&mut s, ms(300), 100, 0.3, 2_500);
        let want = 2.0 * 1000.0 / s.rate();
        assert!(want > 0.2, "{want}");
        let got = s.stats().rto.unwrap().as_secs_f64();
        assert!(close(got, want, 1e-6), "{got} vs {want}");
    }

    #[test]
    fn ism_stretches_the_gap_by_the_sqrt_rtt_ratio() {
        let mut on = started(TfrcConfig::default());
        let mut off = started(TfrcConfig {
            ism: false,
            ..TfrcConfig::default()
        });
        for s in [&mut on, &mut off] {
            feedback(s, ms(100), 100, 0.0, 0);
            feedback(s, ms(1000), 400, 0.0, 0); // no doubling: X_recv = 0 bounds it
        }
        // sqrt-avg = 0.95·sqrt(0.1) + 0.05·sqrt(0.4); f = sqrt(0.4)/sqrt-avg = 1.904 76.
        let f = 0.4f64.sqrt() / (0.95 * 0.1f64.sqrt() + 0.05 * 0.4f64.sqrt());
        assert!(close(f, 1.904_76, 1e-5));
        let ratio = on.packet_gap().as_secs_f64() / off.packet_gap().as_secs_f64();
        assert!(close(ratio, f, 1e-6), "{ratio}");
    }

    #[test]
    fn a_send_error_in_slowstart_forces_congestion_control_until_loss_is_reported() {
        let mut s = started(TfrcConfig::default());
        feedback(&mut s, ms(100), 100, 0.0, 0);
        assert!(s.poll_transmit(ms(100)).is_some());
        s.on_send_error(ms(100));
        assert_eq!(s.mode(), Mode::Forced);
        assert_eq!(s.stats().packets_sent, 1);
        // Loss-free reports: no doubling, only the congestion-control increase (+s/R).
        feedback(&mut s, ms(200), 100, 0.0, 1_000_000);
        assert_eq!(s.mode(), Mode::Forced);
        assert!(close(s.rate(), 29_200.0, 1e-9));
        feedback(&mut s, ms(300), 100, 0.0, 1_000_000);
        assert!(close(s.rate(), 43_800.0, 1e-9));
        feedback(&mut s, ms(400), 100, 0.01, 1_000_000);
        assert_eq!(s.mode(), Mode::CongestionControl);
    }

    #[test]
    fn echoes_from_the_future_or_of_unsent_packets_are_ignored() {
        let mut s = started(TfrcConfig::default());
        let f = FeedbackHeader {
            seq_echo: 0,
            timestamp_echo: ms(500),
            t_delay: Dur::ZERO,
            x_recv: 1,
            p: 0.5,
        };
        let pkt = Packet {
            size: 40,
            header: Header::TfrcFeedback(f),
        };
        s.on_packet(ms(100), &pkt);
        s.on_packet(ms(600), &pkt);
        assert_eq!(s.feedbacks(), 0);
        assert_eq!(s.mode(), Mode::InitRtt);
    }

    // ---- the application-limited sender (RFC 5348 §4.3, §4.4, §8.2) ----

    /// Drives `s` from `from` to `until` as the simulator does (timers, then every packet
    /// due), recording send times.
    fn drive(s: &mut TfrcSender, from: Time, until: Time, sends: &mut Vec<Time>) {
        let mut now = from;
        for _ in 0..100_000 {
            s.on_timeout(now);
            while s.poll_transmit(now).is_some() {
                sends.push(now);
            }
            match s.next_timeout() {
                Some(t) if t <= until => now = t.max(now),
                _ => return,
            }
        }
        panic!("the sender made no progress by {until:?}");
    }

    /// A report at `now` echoing the last packet sent at least `rtt_ms` before, with an RTT
    /// sample of `rtt_ms` (the receiver held it for the rest).
    fn report_rtt(s: &mut TfrcSender, sends: &[Time], now: Time, rtt_ms: u64, p: f64, x: u32) {
        let rtt = Dur::from_millis(rtt_ms);
        let echo = *sends
            .iter()
            .rev()
            .find(|&&t| now.saturating_since(t) >= rtt)
            .expect("a packet sent an RTT before the report");
        let f = FeedbackHeader {
            seq_echo: 0,
            timestamp_echo: echo,
            t_delay: now.saturating_since(echo) - rtt,
            x_recv: x,
            p,
        };
        s.on_packet(
            now,
            &Packet {
                size: 40,
                header: Header::TfrcFeedback(f),
            },
        );
    }

    /// Runs the sender to 106, 212 and 312 ms with a report at each (R = 105 ms): the first
    /// with `p = 0` and no receive rate, then two with `p = 1 %` and `X_recv = x`. Returns
    /// the send times.
    fn three_reports(s: &mut TfrcSender, x: u32) -> Vec<Time> {
        let mut sends = Vec::new();
        let mut last = Time::ZERO;
        for (ms, p, x) in [(106, 0.0, 0), (212, 0.01, x), (312, 0.01, x)] {
            drive(s, last, Time::from_millis(ms), &mut sends);
            last = Time::from_millis(ms);
            report_rtt(s, &sends, last, 105, p, x);
        }
        sends
    }

    fn report_at(s: &mut TfrcSender, sends: &[Time], now: Time, p: f64, x_recv: u32) {
        report_rtt(s, sends, now, 100, p, x_recv);
    }

    #[test]
    fn offered_bytes_limit_what_is_sent_and_an_empty_buffer_sends_nothing() {
        let mut s = TfrcSender::new(TfrcConfig::default());
        s.offer(Some(3000));
        let sizes: Vec<u32> = std::iter::from_fn(|| {
            let t = s.next_timeout()?;
            s.poll_transmit(t).map(|p| p.size)
        })
        .take(10)
        .collect();
        // 1460 + 1460 + 80: the frame's tail goes in a short packet.
        assert_eq!(sizes, vec![1460, 1460, 80]);
        assert_eq!(s.stats().bytes_sent, 3000);
        assert_eq!(s.buffered(), Some(0));
        // Empty: no packet, and the only deadline left is the no-feedback timer (2 s after
        // the first packet), not a send time.
        assert_eq!(s.poll_transmit(Time::from_secs(1)), None);
        assert_eq!(s.next_timeout(), Some(Time::from_secs(2)));
        s.on_timeout(Time::from_secs(2)); // halves X to 730 B/s
                                          // The 80 B packet left at 2 s; its gap is 80 B at the 1460 B/s of then.
        s.offer(Some(10));
        let due = Time::from_secs(2) + Dur::from_secs_f64(80.0 / 1460.0);
        assert_eq!(s.next_timeout(), Some(due));
        assert_eq!(s.poll_transmit(due).map(|p| p.size), Some(10));
        // `offer(None)` makes it bulk again: the next packet is due 10 B / 730 B/s later.
        s.offer(None);
        assert_eq!(s.buffered(), None);
        let due = due + Dur::from_secs_f64(10.0 / 730.0);
        assert_eq!(s.next_timeout(), Some(due));
        assert_eq!(s.poll_transmit(due).map(|p| p.size), Some(1460));
    }

    /// RFC 5348 §4.3 "Update X_recv_set", hand-computed for reports that are not
    /// data-limited (a bulk sender), one per 100 ms with 105 ms RTT samples: entries older
    /// than 2R = 210 ms go, and §8.2.2 keeps at most N = 3.
    #[test]
    fn x_recv_set_keeps_two_rtts_of_reports_when_not_data_limited() {
        let mut s = TfrcSender::new(TfrcConfig::rfc5348());
        let mut sends = Vec::new();
        let mut last = Time::ZERO;
        let mut at = |s: &mut TfrcSender, ms: u64, p: f64, x: u32, sends: &mut Vec<Time>| {
            drive(s, last, Time::from_millis(ms), sends);
            last = Time::from_millis(ms);
            report_rtt(s, sends, last, 105, p, x);
            assert!(!s.data_limited().0, "report at {ms} ms data-limited");
        };
        at(&mut s, 106, 0.0, 0, &mut sends);
        // The initial {Infinity} (stamped at the first packet, 0 s) is 106 ms old: kept.
        assert_eq!(s.recv_limit(), f64::INFINITY);
        // 212 ms: Infinity (212 ms old) goes; {0 @106, 40 000 @212}: recv_limit 80 000.
        at(&mut s, 212, 0.01, 40_000, &mut sends);
        let x_bps = s.x_calc().unwrap();
        assert!(x_bps > 150_000.0, "{x_bps}");
        assert!(close(s.recv_limit(), 80_000.0, 1e-12), "{}", s.recv_limit());
        assert!(close(s.rate(), 80_000.0, 1e-12));
        // {0 @106 (206 ms old), 40 000, 30 000}: still 80 000 (the thesis' rule: 60 000).
        at(&mut s, 312, 0.01, 30_000, &mut sends);
        assert!(close(s.rate(), 80_000.0, 1e-12), "{}", s.rate());
        // {40 000 @212, 30 000 @312, 20 000 @412}.
        at(&mut s, 412, 0.01, 20_000, &mut sends);
        assert!(close(s.rate(), 80_000.0, 1e-12), "{}", s.rate());
        // 40 000 is 300 ms old: {30 000, 20 000, 20 000}.
        at(&mut s, 512, 0.01, 20_000, &mut sends);
        assert!(close(s.rate(), 60_000.0, 1e-12), "{}", s.rate());
        at(&mut s, 612, 0.01, 20_000, &mut sends);
        assert!(close(s.rate(), 40_000.0, 1e-12), "{}", s.rate());
    }

    /// §8.2.2: "it is sufficient to limit X_recv_set to at most N=3 elements": with four
    /// entries younger than 2R, the oldest goes.
    #[test]
    fn x_recv_set_holds_at_most_n_entries() {
        let mut s = TfrcSender::new(TfrcConfig::rfc5348());
        s.x_recv_set.clear();
        for (ms, x) in [(0, 50_000.0), (50, 1_000.0), (100, 2_000.0), (150, 3_000.0)] {
            s.update_x_recv_set(Time::from_millis(ms), x, 0.1);
        }
        assert_eq!(s.x_recv_set.len(), 3);
        assert!(close(s.x_recv_set_max(), 3_000.0, 1e-12));
        // Older than 2R = 200 ms: at 260 ms the 50 ms entry goes, too.
        s.update_x_recv_set(Time::from_millis(260), 500.0, 0.1);
        let kept: Vec<f64> = s.x_recv_set.iter().map(|e| e.1).collect();
        assert_eq!(kept, vec![2_000.0, 3_000.0, 500.0]);
    }

    /// RFC 5348 §4.3 for data-limited intervals (§8.2.1 decides which): "Maximize X_recv_set"
    /// keeps the largest report, and a report with a higher `p` halves the set and takes
    /// `0.85·X_recv` with `recv_limit = max(X_recv_set)`.
    #[test]
    fn a_data_limited_interval_keeps_the_largest_receive_rate() {
        for rule in [DataLimitedRule::Rfc5348, DataLimitedRule::Thesis] {
            let mut s = TfrcSender::new(TfrcConfig {
                data_limited: rule,
                ..TfrcConfig::rfc5348()
            });
            let mut sends = Vec::new();
            let mut last = Time::ZERO;
            for (ms, p, x) in [(106, 0.0, 0), (212, 0.01, 40_000), (312, 0.01, 30_000)] {
                drive(&mut s, last, Time::from_millis(ms), &mut sends);
                last = Time::from_millis(ms);
                report_rtt(&mut s, &sends, last, 105, p, x);
                assert!(!s.data_limited().0);
            }
            // From 312 ms the codec has 100 B every 50 ms: each packet leaves the moment its
            // data arrives, so no send from here on is one at which the sender waited.
            s.offer(Some(0));
            let trickle = |s: &mut TfrcSender, sends: &mut Vec<Time>, from: u64, to: u64| {
                for k in (from..=to).step_by(50) {
                    let now = Time::from_millis(k);
                    s.on_timeout(now);
                    s.offer(Some(100));
                    while s.poll_transmit(now).is_some() {
                        sends.push(now);
                    }
                }
            };
            trickle(&mut s, &mut sends, 350, 500);
            // The report at 512 ms echoes the 400 ms packet: (295, 400] was data-limited.
            report_rtt(&mut s, &sends, Time::from_millis(512), 105, 0.01, 2_000);
            assert_eq!(s.data_limited(), (true, 1));
            match rule {
                DataLimitedRule::Rfc5348 => {
                    // Maximize {0, 40 000, 30 000} + 2 000: {40 000}, recv_limit 80 000.
                    assert!(close(s.x_recv_set_max(), 40_000.0, 1e-12));
                    assert!(close(s.rate(), 80_000.0, 1e-12), "{}", s.rate());
                }
                // The thesis' bound: 2·X_recv.
                DataLimitedRule::Thesis => assert!(close(s.rate(), 4_000.0, 1e-12)),
            }
            trickle(&mut s, &mut sends, 550, 750);
            // p rises in a data-limited interval: halve {40 000} to {20 000}, add
            // 0.85·2 000 = 1 700, maximize: {20 000}, recv_limit = 20 000 (not doubled).
            report_rtt(&mut s, &sends, Time::from_millis(900), 105, 0.02, 2_000);
            assert_eq!(s.data_limited(), (true, 2));
            if rule == DataLimitedRule::Rfc5348 {
                assert!(close(s.x_recv_set_max(), 20_000.0, 1e-12));
                assert!(close(s.recv_limit(), 20_000.0, 1e-12));
                assert!(close(s.rate(), 20_000.0, 1e-12), "{}", s.rate());
            }
        }
    }

    /// RFC 5348 §8.2.1: the interval `(t_new − R, t_new]` is not data-limited if the sender
    /// waited on the rate at some send inside it.
    #[test]
    fn one_rate_limited_send_in_the_covered_interval_makes_it_not_data_limited() {
        let mut s = TfrcSender::new(TfrcConfig::rfc5348());
        let mut sends = Vec::new();
        drive(&mut s, Time::ZERO, Time::from_millis(100), &mut sends);
        report_at(&mut s, &sends, Time::from_millis(100), 0.0, 0); // X = 43 800 B/s
        s.offer(Some(0));
        // At 150 ms two packets' worth arrives: the first goes at once (data-limited), the
        // second waits its gap (the sender is rate-limited then).
        let t = Time::from_millis(150);
        s.offer(Some(2920));
        assert!(s.poll_transmit(t).is_some());
        sends.push(t);
        let due = s.next_timeout().unwrap();
        assert!(due > t && due < Time::from_millis(200));
        assert!(s.poll_transmit(due).is_some());
        sends.push(due);
        report_at(&mut s, &sends, Time::from_millis(300), 0.0, 100_000);
        assert_eq!(s.data_limited(), (false, 0));
        // Next, only data-limited sends: the report covering them says so.
        for k in [320, 360, 400] {
            let now = Time::from_millis(k);
            s.offer(Some(500));
            assert!(s.poll_transmit(now).is_some());
            sends.push(now);
        }
        report_at(&mut s, &sends, Time::from_millis(500), 0.0, 100_000);
        assert_eq!(s.data_limited(), (true, 1));
    }

    /// RFC 5348 §4.4, case by case, R = 100 ms, s = 1460 B, so `recover_rate = W_init/R =
    /// 4380/0.1 = 43 800 B/s`.
    #[test]
    fn rfc_nofeedback_timer_halves_through_x_recv_set_but_not_below_recover_rate_when_idle() {
        // Before any feedback and not idle: halve X. Then idle with p = 0 and
        // X < 2·recover_rate (before an RTT sample, the 1460 B/s probing rate): keep X.
        let mut s = TfrcSender::new(TfrcConfig::rfc5348());
        s.offer(Some(1460));
        assert!(s.poll_transmit(Time::ZERO).is_some());
        s.on_timeout(Time::from_secs(2));
        assert!(close(s.rate(), 730.0, 1e-12));
        // Next expiry: max(2 s, 2s/X = 4 s) later.
        assert_eq!(s.next_timeout(), Some(Time::from_secs(6)));
        s.on_timeout(Time::from_secs(6));
        assert!(close(s.rate(), 730.0, 1e-12));
        assert_eq!(s.stats().timeouts, 2);

        // With feedback (R = 105 ms, so recover_rate = 4380/0.105 = 41 714 B/s):
        // max(X_recv_set) = 100 000 and p = 1 %, X = min(X_Bps, 200 000) = X_Bps.
        let setup = |x_recv: u32| {
            let mut s = TfrcSender::new(TfrcConfig::rfc5348());
            three_reports(&mut s, x_recv);
            s.offer(Some(0)); // idle from here
            s
        };
        let recover = 4380.0 / 0.105;
        let mut s = setup(100_000);
        assert!(close(s.recover_rate(), recover, 1e-9));
        let x_bps = s.x_calc().unwrap();
        assert!(x_bps > 100_000.0 && x_bps < 200_000.0, "{x_bps}");
        assert!(close(s.rate(), x_bps, 1e-12));
        // Idle, but X_recv = 100 000 >= recover_rate, and X_Bps <= 2·X_recv:
        // Update_Limits(X_Bps/2), so X_recv_set = {X_Bps/4} and X = X_Bps/2.
        let t1 = s.next_timeout().unwrap();
        assert_eq!(t1, Time::from_millis(312) + Dur::from_millis(420)); // max(4R, 2s/X)
        s.on_timeout(t1);
        assert!(close(s.x_recv_set_max(), x_bps / 4.0, 1e-12));
        assert!(close(s.rate(), x_bps / 2.0, 1e-12));
        // X_recv = X_Bps/4 < recover_rate now, and still idle: no further halving, ever.
        assert!(x_bps / 4.0 < recover);
        for _ in 0..20 {
            let t = s.next_timeout().unwrap();
            s.on_timeout(t);
        }
        assert!(close(s.rate(), x_bps / 2.0, 1e-12), "{}", s.rate());
        assert_eq!(s.stats().timeouts, 21);

        // Idle with X_recv = 20 000 < recover_rate: the timer leaves X = 40 000 alone.
        let mut s = setup(20_000);
        assert!(close(s.rate(), 40_000.0, 1e-12), "{}", s.rate());
        let t1 = s.next_timeout().unwrap();
        s.on_timeout(t1);
        assert!(close(s.rate(), 40_000.0, 1e-12), "{}", s.rate());

        // 2·X_recv was the limit (X_Bps > 2·50 000): Update_Limits(X_recv), X = 50 000.
        let mut s = setup(50_000);
        assert!(close(s.rate(), 100_000.0, 1e-12), "{}", s.rate());
        let t1 = s.next_timeout().unwrap();
        s.on_timeout(t1);
        assert!(close(s.x_recv_set_max(), 25_000.0, 1e-12));
        assert!(close(s.rate(), 50_000.0, 1e-12));
        // Sending again (not idle): the next expiry halves below recover_rate.
        s.offer(Some(1_000_000));
        let t2 = s.nofeedback_at.unwrap();
        let mut sends = Vec::new();
        drive(&mut s, t1, t2, &mut sends);
        assert!(!sends.is_empty());
        assert_eq!(s.stats().timeouts, 2);
        assert!(close(s.x_recv_set_max(), 12_500.0, 1e-12));
        assert!(close(s.rate(), 25_000.0, 1e-12), "{}", s.rate());
    }

    /// §4.4 on the thesis' sender (`data_limited = "thesis"`, increase limit on): the timer
    /// halves through the last report's `X_recv` and lowers the bound, but never raises `X`,
    /// which the increase limit holds below `min(X_Bps, 2·X_recv)`.
    #[test]
    fn the_rfc_timer_on_the_thesis_sender_lowers_the_bound_and_never_raises_x() {
        let mut s = TfrcSender::new(TfrcConfig {
            nofeedback_rule: NofeedbackRule::Rfc5348,
            smooth_increase: false,
            ..TfrcConfig::default()
        });
        let mut sends = three_reports(&mut s, 100_000);
        assert!(close(s.x_recv_set_max(), 100_000.0, 1e-12));
        // s/R, then one packet per RTT more per report (004 Eq. 3.7-3.8).
        let x0 = 3.0 * 1460.0 / 0.105;
        assert!(close(s.rate(), x0, 1e-9), "{}", s.rate());
        let x_bps = s.x_calc().unwrap();
        // Sending on (not idle) until the timer expires: X_Bps <= 2·X_recv, so
        // Update_Limits(X_Bps/2) sets {X_Bps/4}; X_Bps/2 would be above X, so X stays.
        let t = s.nofeedback_at.unwrap();
        drive(&mut s, Time::from_millis(312), t, &mut sends);
        assert_eq!(s.stats().timeouts, 1);
        assert!(close(s.x_recv_set_max(), x_bps / 4.0, 1e-12));
        assert!(x_bps / 2.0 > x0);
        assert!(close(s.rate(), x0, 1e-12), "{}", s.rate());
    }

    /// The thesis' timer halves `X` whether or not the sender had anything to send.
    #[test]
    fn the_thesis_nofeedback_timer_halves_an_idle_sender_too() {
        let mut s = TfrcSender::new(TfrcConfig::default());
        s.offer(Some(1460));
        assert!(s.poll_transmit(Time::ZERO).is_some());
        s.on_timeout(Time::from_secs(2));
        let t = s.next_timeout().unwrap();
        s.on_timeout(t);
        assert!(close(s.rate(), 1460.0 / 4.0, 1e-12));
    }

    use crate::testing::wild_u64;

    proptest::proptest! {
        /// Reports with any field values a peer could put in a well-formed feedback header
        /// (echoes of times never sent, holding delays of centuries, any `X_recv`, any `p` the
        /// decoder accepts), arriving at any times: no panic, the rate stays finite and at or
        /// above `s/t_mbi`, and the sender keeps a deadline.
        #[test]
        fn any_feedback_values_never_panic(
            events in proptest::collection::vec(
                (wild_u64(), wild_u64(), wild_u64(), proptest::num::u32::ANY,
                 proptest::prop_oneof![0.0f64..=1.0, 0.0f64..1e-300, proptest::strategy::Just(0.0), proptest::strategy::Just(1.0)],
                 0u64..(1u64 << 40)),
                1..100,
            ),
            ns2 in proptest::bool::ANY,
        ) {
            let cfg = if ns2 { TfrcConfig::ns2() } else { TfrcConfig::default() };
            let floor = f64::from(cfg.packet_size) / 64.0;
            let mut s = TfrcSender::new(cfg);
            let mut now = Time::ZERO;
            for (seq_echo, echo, t_delay, x_recv, p, step) in events {
                let burst = std::iter::from_fn(|| s.poll_transmit(now)).take(1000).count();
                proptest::prop_assert!(burst < 1000, "endless burst: gap {:?} rate {} mode {:?}", s.packet_gap(), s.rate(), s.mode());
                let f = FeedbackHeader { seq_echo, timestamp_echo: Time(echo), t_delay: Dur(t_delay), x_recv, p };
                s.on_packet(now, &Packet { size: 40, header: Header::TfrcFeedback(f) });
                let next = now.saturating_add(Dur(step));
                if let Some(t) = s.next_timeout().filter(|t| *t <= next) {
                    s.on_timeout(t.max(now));
                }
                now = next;
                s.on_timeout(now);
                proptest::prop_assert!(s.rate().is_finite() && s.rate() >= floor * (1.0 - 1e-12), "rate {} floor {floor} mode {:?} rtt {:?}", s.rate(), s.mode(), s.rtt().smoothed());
                proptest::prop_assert!(s.next_timeout().is_some());
            }
        }

        /// Whatever the feedback fields (a holding delay of 0, of exactly the elapsed time, of
        /// more than it, of centuries; any `X_recv` and `p`), echoing packets the sender did
        /// send: no RTT estimate, smoothed or latest, is ever 0, and the ns-2 RTO rule's
        /// estimator gets no zero either (RFC 5348 §4.3 `R_sample <= 0` is floored).
        #[test]
        fn no_rtt_estimate_is_ever_zero(
            events in proptest::collection::vec(
                (0usize..8, proptest::prop_oneof![
                    proptest::strategy::Just(0u64), proptest::strategy::Just(u64::MAX),
                    0u64..400_000_000, wild_u64()],
                 proptest::option::of(-3i64..=3),
                 proptest::num::u32::ANY, 0.0f64..=0.2, 0u64..300_000_000),
                1..80,
            ),
            preset in 0usize..3,
        ) {
            let cfg = match preset {
                0 => TfrcConfig::default(),
                1 => TfrcConfig::ns2(),
                _ => TfrcConfig::rfc5348(),
            };
            let mut s = TfrcSender::new(cfg);
            let mut now = Time::ZERO;
            let mut sends: Vec<Time> = Vec::new();
            for (back, t_delay, near_elapsed, x_recv, p, step) in events {
                for pkt in std::iter::from_fn(|| s.poll_transmit(now)).take(100) {
                    if let Header::TfrcData(h) = pkt.header {
                        sends.push(h.timestamp);
                    }
                }
                if let Some(&echo) = sends.iter().rev().nth(back.min(sends.len().saturating_sub(1))) {
                    // Either a wild holding delay, or one within a few ns of the elapsed time.
                    let elapsed = now.saturating_since(echo).as_nanos();
                    let t_delay = match near_elapsed {
                        Some(off) => elapsed.saturating_add_signed(off),
                        None => t_delay,
                    };
                    let f = FeedbackHeader { seq_echo: 0, timestamp_echo: echo, t_delay: Dur(t_delay), x_recv, p };
                    s.on_packet(now, &Packet { size: 40, header: Header::TfrcFeedback(f) });
                    if s.rtt().samples() > 0 {
                        proptest::prop_assert!(s.rtt().smoothed().is_some_and(|r| r > Dur::ZERO), "smoothed {:?}", s.rtt().smoothed());
                        proptest::prop_assert!(s.rtt().latest().is_some_and(|r| r > Dur::ZERO), "latest {:?}", s.rtt().latest());
                        proptest::prop_assert!(s.rtt().smoothed_secs().is_some_and(|r| r > 0.0));
                        proptest::prop_assert!(s.stats().rtt.is_some_and(|r| r > Dur::ZERO));
                        proptest::prop_assert!(s.rtt().ism_factor() > 0.0);
                    }
                }
                now = now.saturating_add(Dur(step));
                s.on_timeout(now);
            }
        }

        /// An application-limited sender never sends more than it was offered: the payload
        /// bytes it sent plus what is still buffered are exactly what was offered, and no
        /// packet carries more than `s`, whatever the reports and timers do.
        #[test]
        fn never_sends_more_than_was_offered(
            events in proptest::collection::vec(
                (0u64..300, 0u64..4, 0u64..20_000, 0.0f64..=0.2, proptest::num::u32::ANY),
                1..200,
            ),
            preset in 0usize..3,
        ) {
            let cfg = [TfrcConfig::default(), TfrcConfig::ns2(), TfrcConfig::rfc5348()][preset].clone();
            let (s_max, hdr) = (cfg.packet_size, cfg.header_size);
            let mut s = TfrcSender::new(cfg);
            s.offer(Some(0));
            let (mut offered, mut sent) = (0u64, 0u64);
            let mut now = Time::ZERO;
            for (step_ms, kind, bytes, p, x_recv) in events {
                now += Dur::from_millis(step_ms);
                match kind {
                    0 => {
                        s.offer(Some(bytes));
                        offered += bytes;
                    }
                    1 => {
                        let echo = s.last_send.unwrap_or(Time::ZERO);
                        let f = FeedbackHeader {
                            seq_echo: 0,
                            timestamp_echo: echo,
                            t_delay: Dur::from_millis(step_ms / 3),
                            x_recv,
                            p,
                        };
                        s.on_packet(now, &Packet { size: 40, header: Header::TfrcFeedback(f) });
                    }
                    _ => s.on_timeout(now),
                }
                while let Some(pkt) = s.poll_transmit(now) {
                    proptest::prop_assert!(pkt.size > hdr && pkt.size <= s_max + hdr);
                    sent += u64::from(pkt.size - hdr);
                }
                proptest::prop_assert!(sent <= offered);
                proptest::prop_assert_eq!(sent + s.buffered().unwrap(), offered);
                proptest::prop_assert_eq!(s.stats().bytes_sent, sent);
                proptest::prop_assert!(s.rate().is_finite() && s.rate() > 0.0);
            }
        }

        /// Whatever the reports say and however the timers fire, the rate stays finite and
        /// at or above `s/t_mbi`, and the sender always has a deadline in the future.
        #[test]
        fn rate_stays_finite_and_above_the_floor(
            events in proptest::collection::vec(
                (1u64..500, 0u64..3, 0.0f64..=1.0, proptest::num::u32::ANY, proptest::bool::ANY),
                1..200,
            ),
            ns2 in proptest::bool::ANY,
        ) {
            let cfg = if ns2 { TfrcConfig::ns2() } else { TfrcConfig::default() };
            let floor = f64::from(cfg.packet_size) / 64.0;
            let mut s = TfrcSender::new(cfg);
            let mut now = Time::ZERO;
            for (step_ms, kind, p, x_recv, err) in events {
                now += Dur::from_millis(step_ms);
                match kind {
                    0 => {
                        s.on_timeout(now);
                        while s.poll_transmit(now).is_some() {
                            if err {
                                s.on_send_error(now);
                            }
                        }
                    }
                    1 => {
                        let echo = s.last_send.unwrap_or(Time::ZERO);
                        let f = FeedbackHeader {
                            seq_echo: 0,
                            timestamp_echo: echo,
                            t_delay: Dur::from_millis(step_ms / 3),
                            x_recv,
                            p: if err { 0.0 } else { p },
                        };
                        s.on_packet(now, &Packet { size: 40, header: Header::TfrcFeedback(f) });
                    }
                    _ => s.on_timeout(now),
                }
                proptest::prop_assert!(s.rate().is_finite() && s.rate() >= floor * (1.0 - 1e-12));
                let t = s.next_timeout().unwrap();
                proptest::prop_assert!(t > now || s.poll_transmit(now).is_some());
            }
        }
    }
}
