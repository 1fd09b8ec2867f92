//! Flows: a sender/receiver pair of sans-IO endpoints on a route, plus the simulator's own
//! traffic sources (CBR and on/off CBR with their sink).
//!
//! The hot loop dispatches through the [`SenderImpl`] and [`ReceiverImpl`] enums: one `match`,
//! inlinable, no vtable. Protocols from tfcc-core get a variant each as they land (TCP
//! Reno/NewReno/SACK from `tfcc_core::tcp`; then TFRC, TFWC, ...): add the variant, one arm in
//! the `dispatch!` macro, and a `FlowSpec` constructor. `Custom` takes any boxed endpoint at
//! the API edge (tests, experiments, Python-defined protocols) at the cost of a virtual call.

use tfcc_core::endpoint::{Endpoint, Receiver, Sender, Stats};
use tfcc_core::tcp::{TcpConfig, TcpSender, TcpSink};
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::warc::{AnyRateEstimator, RateReceiver, RateSender, RateSenderConfig};
use tfcc_core::{Dur, Header, Packet, Rate, Time};

/// Constant-bit-rate source parameters (ns-2's `Application/Traffic/CBR` with `random_ 0`, and
/// its on/off variant used for 003 E2.4's oscillating cross traffic).
#[derive(Clone, Debug, PartialEq)]
pub struct CbrConfig {
    /// Sending rate while on, counting whole packets on the wire.
    pub rate: Rate,
    /// Bytes per packet on the wire.
    pub packet_size: u32,
    /// Square wave: on for `on`, then silent for `off`, starting with an on period at the
    /// flow's start. `None` sends continuously.
    pub on_off: Option<(Dur, Dur)>,
}

impl CbrConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.rate.bps() == 0 {
            return Err("cbr rate must be positive".into());
        }
        if self.packet_size == 0 {
            return Err("packet_size must be positive".into());
        }
        if let Some((on, _)) = self.on_off {
            if on.is_zero() {
                return Err("cbr on period must be positive".into());
            }
        }
        Ok(())
    }
}

/// A CBR sender. Packet `k` of an on period that began at `b` leaves at
/// `b + floor(k · size · 8 s / rate)`: exact on average, with no drift from rounding a per-packet
/// interval.
#[derive(Clone, Debug)]
pub struct CbrSender {
    cfg: CbrConfig,
    stop: Time,
    burst_start: Time,
    in_burst: u64,
    next: Option<Time>,
    seq: u64,
    bytes_sent: u64,
    /// Application bytes offered and not yet sent: `None` sends continuously (a CBR source);
    /// `Some` sends only while bytes wait, at the configured rate (a video source without
    /// congestion control, 002 R7's "Vic without CC": [`Sender::offer`]).
    backlog: Option<u64>,
    /// The backlog ran dry: the next offered bytes restart the pacing clock.
    idle: bool,
}

impl CbrSender {
    pub fn new(cfg: CbrConfig, start: Time, stop: Option<Time>) -> CbrSender {
        let mut s = CbrSender {
            cfg,
            stop: stop.unwrap_or(Time::MAX),
            burst_start: start,
            in_burst: 0,
            next: None,
            seq: 0,
            bytes_sent: 0,
            backlog: None,
            idle: false,
        };
        s.next = s.schedule();
        s
    }

    pub fn config(&self) -> &CbrConfig {
        &self.cfg
    }

    fn offset(&self, k: u64) -> Dur {
        let ns = u128::from(k) * u128::from(self.cfg.packet_size) * 8 * 1_000_000_000
            / u128::from(self.cfg.rate.bps().max(1));
        Dur(ns.min(u128::from(u64::MAX)) as u64)
    }

    /// The send time of the next packet, moving to the next on period when this one is over.
    fn schedule(&mut self) -> Option<Time> {
        let mut t = self.burst_start.saturating_add(self.offset(self.in_burst));
        if let Some((on, off)) = self.cfg.on_off {
            if t >= self.burst_start.saturating_add(on) {
                self.burst_start = self.burst_start.saturating_add(on + off);
                self.in_burst = 0;
                t = self.burst_start;
            }
        }
        (t < self.stop).then_some(t)
    }
}

impl Endpoint for CbrSender {
    fn on_packet(&mut self, _now: Time, _pkt: &Packet) {}
    fn on_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if let Some(b) = self.backlog {
            if b == 0 {
                self.idle = true;
                return None;
            }
            if self.idle {
                // Restart the clock at the first bytes after a dry spell, but never send
                // closer to the last packet than the rate allows.
                self.idle = false;
                let at = self.next.map_or(now, |t| t.max(now));
                self.burst_start = at;
                self.in_burst = 0;
                self.next = self.schedule();
            }
        }
        let t = self.next?;
        if t > now {
            return None;
        }
        let p = Packet::raw(self.seq, now, self.cfg.packet_size);
        self.seq += 1;
        self.bytes_sent += u64::from(self.cfg.packet_size);
        self.in_burst += 1;
        self.next = self.schedule();
        if let Some(b) = &mut self.backlog {
            *b = b.saturating_sub(u64::from(self.cfg.packet_size));
        }
        Some(p)
    }
    fn next_timeout(&self) -> Option<Time> {
        match self.backlog {
            Some(0) => None,
            _ => self.next,
        }
    }
    fn stats(&self) -> Stats {
        let mut s = Stats::default();
        s.rate = Some(self.cfg.rate.bytes_per_sec());
        s.packets_sent = self.seq;
        s.bytes_sent = self.bytes_sent;
        s.mode = "cbr";
        s
    }
}

impl Sender for CbrSender {
    /// A continuous source until the first offer; then it sends only what it is offered, one
    /// packet of `packet_size` per `packet_size·8/rate` (a short remainder takes a whole packet,
    /// as TFWC's sender does).
    fn offer(&mut self, bytes: Option<u64>) {
        self.backlog = match (self.backlog, bytes) {
            (_, None) => None,
            (Some(b), Some(x)) => Some(b.saturating_add(x)),
            (None, Some(x)) => {
                self.idle = true;
                Some(x)
            }
        };
    }
    /// Application bytes waiting to be sent; `None` for a continuous CBR source. Through the
    /// trait, as TFRC's and TFWC's, so that the testbed's video feed and its frame log read a
    /// video-fed CBR sender's buffer as the simulator does.
    fn buffered(&self) -> Option<u64> {
        self.backlog
    }
}

/// The receiving end of a raw-packet flow: counts what arrives and infers losses from gaps in
/// the sequence numbers. The whole packet counts as delivered payload (raw packets have no
/// protocol header of their own).
#[derive(Clone, Debug, Default)]
pub struct CbrSink {
    received: u64,
    bytes: u64,
    /// One past the highest sequence number seen.
    expected: u64,
    delay_sum: Dur,
}

impl CbrSink {
    pub fn new() -> CbrSink {
        CbrSink::default()
    }
    pub fn received(&self) -> u64 {
        self.received
    }
    /// Mean one-way delay of the packets received.
    pub fn mean_delay(&self) -> Option<Dur> {
        (self.received > 0).then(|| self.delay_sum / self.received)
    }
}

impl Endpoint for CbrSink {
    fn on_packet(&mut self, now: Time, pkt: &Packet) {
        // Header grows with the protocols; a sink counts only raw packets.
        if let Header::Raw { seq, sent_at } = pkt.header {
            self.received += 1;
            self.bytes += u64::from(pkt.size);
            self.expected = self.expected.max(seq + 1);
            self.delay_sum += now.saturating_since(sent_at);
        }
    }
    fn on_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        None
    }
    fn next_timeout(&self) -> Option<Time> {
        None
    }
    fn stats(&self) -> Stats {
        let mut s = Stats::default();
        if self.expected > 0 {
            s.p = Some(self.expected.saturating_sub(self.received) as f64 / self.expected as f64);
        }
        s.mode = "sink";
        s
    }
}

impl Receiver for CbrSink {
    fn delivered_bytes(&self) -> u64 {
        self.bytes
    }
}

/// The sending endpoints the simulator drives, dispatched by `match` in the hot loop.
///
/// Variants differ in size (a TCP sender with its scoreboard is ~600 bytes, CBR ~100): each
/// flow holds one value in place for the whole run and it is never moved on the hot path, so
/// boxing would only add a pointer chase per event.
#[allow(clippy::large_enum_variant)]
pub enum SenderImpl {
    Cbr(CbrSender),
    /// ns-2's Reno, NewReno or SACK TCP (bulk).
    Tcp(TcpSender),
    /// Boxed: the TFRC state (loss history, pacing) dwarfs the other variants.
    Tfrc(Box<TfrcSender>),
    /// Boxed for the same reason: send-time queue, loss history and jitter generator.
    Tfwc(Box<TfwcSender>),
    /// The rate-paced sender of WARC, TEAR and TFRCP (003).
    Rate(RateSender),
    /// A SURGE web user (001 Sec. 3.3) over one TCP sender, boxed like the other large ones.
    /// A variant of its own so the simulator reaches the TCP inside: a user whose transfers
    /// run under PTCP joins an aggregate and gets the oracle like any PTCP connection.
    Web(Box<crate::surge::WebSender>),
    /// Any sender, through a virtual call (API edge only).
    Custom(Box<dyn Sender + Send>),
}

/// The receiving endpoints the simulator drives (sized like [`SenderImpl`], for the same
/// reason).
#[allow(clippy::large_enum_variant)]
pub enum ReceiverImpl {
    Sink(CbrSink),
    /// `TCPSink` / `TCPSink/Sack1`, with or without delayed ACKs.
    Tcp(TcpSink),
    Tfrc(Box<TfrcReceiver>),
    Tfwc(Box<TfwcReceiver>),
    /// WARC's, TEAR's or TFRCP's receiver (003), where their congestion control runs.
    Rate(Box<RateReceiver>),
    Custom(Box<dyn Receiver + Send>),
}

macro_rules! dispatch {
    ($self:expr, $e:ident => $body:expr, [$($variant:path),*]) => {
        match $self {
            $($variant($e) => $body,)*
        }
    };
}

/// `dispatch!` over every [`SenderImpl`] variant (the list stands here once).
macro_rules! dispatch_sender {
    ($self:expr, $e:ident => $body:expr) => {
        dispatch!($self, $e => $body, [SenderImpl::Cbr, SenderImpl::Tcp, SenderImpl::Tfrc, SenderImpl::Tfwc, SenderImpl::Rate, SenderImpl::Web, SenderImpl::Custom])
    };
}

/// `dispatch!` over every [`ReceiverImpl`] variant.
macro_rules! dispatch_receiver {
    ($self:expr, $e:ident => $body:expr) => {
        dispatch!($self, $e => $body, [ReceiverImpl::Sink, ReceiverImpl::Tcp, ReceiverImpl::Tfrc, ReceiverImpl::Tfwc, ReceiverImpl::Rate, ReceiverImpl::Custom])
    };
}

impl SenderImpl {
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet) {
        dispatch_sender!(self, s => s.on_packet(now, p))
    }
    #[inline]
    pub fn on_timeout(&mut self, now: Time) {
        dispatch_sender!(self, s => s.on_timeout(now))
    }
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        dispatch_sender!(self, s => s.poll_transmit(now))
    }
    #[inline]
    pub fn next_timeout(&self) -> Option<Time> {
        dispatch_sender!(self, s => s.next_timeout())
    }
    pub fn stats(&self) -> Stats {
        dispatch_sender!(self, s => s.stats())
    }
    /// [`Sender::offer`]: limit (`Some`) or unlimit (`None`) what the application has to send.
    pub fn offer(&mut self, bytes: Option<u64>) {
        dispatch_sender!(self, s => s.offer(bytes))
    }
    /// Bytes on the wire of a full data packet, the size every bulk data packet has (TCP's SYN
    /// is smaller, an application-limited TFRC or TFWC packet may carry less payload): a
    /// DropTail queue limited in bytes that cannot admit it admits none of the flow's data,
    /// which the scenario check refuses rather than run a flow of zero throughput. Taken from the sizes each sender puts on its
    /// packets; `None` for a boxed sender, which does not say.
    pub fn data_wire_size(&self) -> Option<u32> {
        match self {
            SenderImpl::Cbr(s) => Some(s.config().packet_size),
            SenderImpl::Tcp(_) | SenderImpl::Web(_) => self.tcp().map(|t| {
                let c = t.config();
                c.segment_size.saturating_add(c.data_header_size())
            }),
            SenderImpl::Tfrc(s) => Some(s.config().wire_size()),
            SenderImpl::Tfwc(s) => Some(s.config().packet_size),
            SenderImpl::Rate(s) => Some(s.config().packet_size),
            SenderImpl::Custom(_) => None,
        }
    }
    /// Application bytes the sender still holds (offered, not yet sent): TFRC's, TFWC's and an
    /// offered CBR sender's send buffers. `None` for a bulk source and for the senders that do
    /// not tell.
    pub fn buffered(&self) -> Option<u64> {
        match self {
            SenderImpl::Tfrc(s) => s.buffered(),
            SenderImpl::Tfwc(s) => s.buffered(),
            SenderImpl::Cbr(s) => s.buffered(),
            _ => None,
        }
    }
    /// Start counting the loss events of a sender that counts them itself (TCP, TFWC) from
    /// `from`: the measurement window's start ([`SenderImpl::loss_events_since`]).
    pub fn count_loss_events_from(&mut self, from: Time) {
        match self {
            SenderImpl::Tfwc(s) => s.count_loss_events_from(from),
            _ => {
                if let Some(t) = self.tcp_mut() {
                    t.count_loss_events_from(from);
                }
            }
        }
    }
    /// The sender's loss events located in the window, each where the sender places it
    /// (`TcpSender::loss_events_since`, `TfwcSender::loss_events_since`); `None` for senders
    /// that count no loss events of their own.
    pub fn loss_events_since(&self) -> Option<u64> {
        match self {
            SenderImpl::Tfwc(s) => s.loss_events_since(),
            _ => self.tcp().and_then(TcpSender::loss_events_since),
        }
    }
    /// The TCP sender of a TCP flow or of a web user.
    pub fn tcp(&self) -> Option<&TcpSender> {
        match self {
            SenderImpl::Tcp(t) => Some(t),
            SenderImpl::Web(w) => Some(w.tcp()),
            _ => None,
        }
    }
    /// [`SenderImpl::tcp`], mutably.
    pub fn tcp_mut(&mut self) -> Option<&mut TcpSender> {
        match self {
            SenderImpl::Tcp(t) => Some(t),
            SenderImpl::Web(w) => Some(w.tcp_mut()),
            _ => None,
        }
    }
}

impl ReceiverImpl {
    #[inline]
    pub fn on_packet(&mut self, now: Time, p: &Packet) {
        dispatch_receiver!(self, s => s.on_packet(now, p))
    }
    #[inline]
    pub fn on_timeout(&mut self, now: Time) {
        dispatch_receiver!(self, s => s.on_timeout(now))
    }
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        dispatch_receiver!(self, s => s.poll_transmit(now))
    }
    #[inline]
    pub fn next_timeout(&self) -> Option<Time> {
        dispatch_receiver!(self, s => s.next_timeout())
    }
    pub fn stats(&self) -> Stats {
        dispatch_receiver!(self, s => s.stats())
    }
    pub fn delivered_bytes(&self) -> u64 {
        dispatch_receiver!(self, s => s.delivered_bytes())
    }
    /// Bytes on the wire of the largest feedback packet (ACK, report) the receiver sends, as
    /// [`SenderImpl::data_wire_size`] for the way back: a queue that cannot admit it drops
    /// all the feedback of that size (a TCP-SACK sink's ACKs with blocks: the sender stalls
    /// at its first loss). `None` for a receiver that sends none (a CBR sink) or does not say.
    pub fn feedback_wire_size(&self) -> Option<u32> {
        match self {
            ReceiverImpl::Sink(_) | ReceiverImpl::Custom(_) => None,
            ReceiverImpl::Tcp(r) => Some(r.max_ack_size()),
            ReceiverImpl::Tfrc(r) => Some(r.feedback_size()),
            ReceiverImpl::Tfwc(r) => Some(r.ack_size()),
            ReceiverImpl::Rate(r) => Some(r.feedback_size()),
        }
    }
}

/// One flow of a simulation.
pub struct FlowSpec {
    /// Protocol name for reports ("cbr", "tcp-sack", ...).
    pub protocol: String,
    /// Index of its route in the topology.
    pub route: usize,
    /// The sender is first polled at `start`.
    pub start: Time,
    /// After `stop` the sender is no longer polled or woken; packets in flight still arrive.
    pub stop: Option<Time>,
    pub sender: SenderImpl,
    pub receiver: ReceiverImpl,
}

impl FlowSpec {
    /// A CBR (or on/off CBR) flow into a counting sink.
    pub fn cbr(route: usize, cfg: CbrConfig, start: Time, stop: Option<Time>) -> FlowSpec {
        FlowSpec {
            protocol: if cfg.on_off.is_some() {
                "cbr-onoff".into()
            } else {
                "cbr".into()
            },
            route,
            start,
            stop,
            sender: SenderImpl::Cbr(CbrSender::new(cfg, start, stop)),
            receiver: ReceiverImpl::Sink(CbrSink::new()),
        }
    }

    /// A bulk TCP flow (ns-2 `Application/FTP` over `Agent/TCP/{Reno,Newreno,Sack1}` into the
    /// matching sink); the protocol name (`tcp-reno`, `tcp-newreno`, `tcp-sack`) follows
    /// `cfg.variant`, or is `ttfwc` (000), `ptcp` (001) or `tcp-cubic` (RFC 9438) with that congestion control. The sender starts with
    /// the SYN at `start`.
    pub fn tcp(route: usize, cfg: TcpConfig, start: Time, stop: Option<Time>) -> FlowSpec {
        let protocol = match &cfg.congestion {
            tfcc_core::tcp::Congestion::Reno => cfg.variant.name(),
            tfcc_core::tcp::Congestion::Ttfwc(_) => "ttfwc",
            tfcc_core::tcp::Congestion::Ptcp(_) => "ptcp",
            tfcc_core::tcp::Congestion::Cubic(_) => "tcp-cubic",
            c => c.friendly_rule().map_or("tcp", |r| r.name()),
        };
        FlowSpec {
            protocol: protocol.into(),
            route,
            start,
            stop,
            receiver: ReceiverImpl::Tcp(TcpSink::new(&cfg)),
            sender: SenderImpl::Tcp(TcpSender::new(cfg)),
        }
    }

    /// A TFRC flow (004; RFC 5348). `cfg` should have passed [`TfrcConfig::validate`].
    pub fn tfrc(route: usize, cfg: TfrcConfig, start: Time, stop: Option<Time>) -> FlowSpec {
        FlowSpec {
            protocol: "tfrc".into(),
            route,
            start,
            stop,
            sender: SenderImpl::Tfrc(Box::new(TfrcSender::new(cfg.clone()))),
            receiver: ReceiverImpl::Tfrc(Box::new(TfrcReceiver::new(cfg))),
        }
    }

    /// A bulk TFWC flow (002): the window sender and its Ack Vector receiver.
    pub fn tfwc(route: usize, cfg: TfwcConfig, start: Time, stop: Option<Time>) -> FlowSpec {
        FlowSpec {
            protocol: "tfwc".into(),
            route,
            start,
            stop,
            receiver: ReceiverImpl::Tfwc(Box::new(TfwcReceiver::new(&cfg))),
            sender: SenderImpl::Tfwc(Box::new(TfwcSender::new(cfg, start))),
        }
    }

    /// A receiver-driven rate flow (003): WARC, TEAR or TFRCP by the estimator, named after it.
    pub fn rate(
        route: usize,
        cfg: RateSenderConfig,
        estimator: AnyRateEstimator,
        start: Time,
        stop: Option<Time>,
    ) -> FlowSpec {
        FlowSpec {
            protocol: estimator.name().into(),
            route,
            start,
            stop,
            receiver: ReceiverImpl::Rate(Box::new(RateReceiver::for_sender(estimator, &cfg))),
            sender: SenderImpl::Rate(RateSender::new(cfg)),
        }
    }

    /// Any pair of endpoints, boxed (the API edge).
    pub fn custom(
        protocol: impl Into<String>,
        route: usize,
        sender: Box<dyn Sender + Send>,
        receiver: Box<dyn Receiver + Send>,
        start: Time,
        stop: Option<Time>,
    ) -> FlowSpec {
        FlowSpec {
            protocol: protocol.into(),
            route,
            start,
            stop,
            sender: SenderImpl::Custom(sender),
            receiver: ReceiverImpl::Custom(receiver),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut CbrSender, until: Time) -> Vec<Time> {
        let mut out = Vec::new();
        while let Some(t) = s.next_timeout() {
            if t > until {
                break;
            }
            s.on_timeout(t);
            while let Some(p) = s.poll_transmit(t) {
                let Header::Raw { sent_at, .. } = p.header else {
                    unreachable!()
                };
                out.push(sent_at);
            }
        }
        out
    }

    /// Offered bytes only, at the rate; a dry spell restarts the clock at the next offer, no
    /// earlier than one packet time after the last packet.
    #[test]
    fn an_offered_cbr_sends_what_it_is_offered_at_its_rate() {
        let cfg = CbrConfig {
            rate: Rate::from_mbps(8), // 1000 B: 1 ms apart
            packet_size: 1000,
            on_off: None,
        };
        let mut s = CbrSender::new(cfg, Time::ZERO, None);
        s.offer(Some(0));
        assert_eq!(s.next_timeout(), None);
        assert!(s.poll_transmit(Time::from_millis(5)).is_none());
        s.offer(Some(2500)); // three packets, the last one short
        let first = s
            .poll_transmit(Time::from_millis(10))
            .expect("sends at once");
        assert_eq!(first.size, 1000);
        assert_eq!(s.buffered(), Some(1500));
        let rest = drain(&mut s, Time::from_secs(1));
        assert_eq!(rest, [Time::from_millis(11), Time::from_millis(12)]);
        assert_eq!(s.buffered(), Some(0));
        assert_eq!(s.next_timeout(), None);
        // Offered again 0.5 ms after the last packet: it waits for the 1 ms spacing.
        s.offer(Some(1000));
        let t = Time::from_micros(12_500);
        assert!(s.poll_transmit(t).is_none());
        assert_eq!(drain(&mut s, Time::from_secs(1)), [Time::from_millis(13)]);
    }

    #[test]
    fn cbr_spaces_packets_exactly_at_the_configured_rate() {
        // 1000 B at 3 Mb/s: 2.666... ms apart, floor-rounded per packet without drift.
        let cfg = CbrConfig {
            rate: Rate::from_mbps(3),
            packet_size: 1000,
            on_off: None,
        };
        let mut s = CbrSender::new(cfg, Time::from_secs(1), Some(Time::from_secs(2)));
        let times = drain(&mut s, Time::from_secs(10));
        assert_eq!(times.len(), 375); // one second at 375 packets/s
        assert_eq!(times[0], Time::from_secs(1));
        assert_eq!(times[1], Time(1_002_666_666));
        assert_eq!(times[3], Time(1_008_000_000));
        assert_eq!(s.stats().bytes_sent, 375_000);
    }

    #[test]
    fn on_off_cbr_is_silent_during_off_periods() {
        let cfg = CbrConfig {
            rate: Rate::from_mbps(8),
            packet_size: 1000, // 1 ms per packet
            on_off: Some((Dur::from_millis(10), Dur::from_millis(30))),
        };
        let mut s = CbrSender::new(cfg, Time::ZERO, None);
        let times = drain(&mut s, Time::from_millis(99));
        // On 0-10 ms, 40-50, 80-90: ten packets each.
        assert_eq!(times.len(), 30);
        assert_eq!(times[9], Time::from_millis(9));
        assert_eq!(times[10], Time::from_millis(40));
        assert_eq!(times[20], Time::from_millis(80));
    }

    #[test]
    fn sink_infers_losses_from_sequence_gaps() {
        let mut k = CbrSink::new();
        for seq in [0u64, 1, 3, 4, 7] {
            k.on_packet(Time::from_millis(5), &Packet::raw(seq, Time::ZERO, 100));
        }
        assert_eq!(k.delivered_bytes(), 500);
        assert_eq!(k.stats().p, Some(3.0 / 8.0));
        assert_eq!(k.mean_delay(), Some(Dur::from_millis(5)));
    }
}
