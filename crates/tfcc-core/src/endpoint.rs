//! The sans-IO endpoint interface every protocol implements.
//!
//! A protocol is a pair of endpoints, a [`Sender`] and a [`Receiver`] (DESIGN.md, "Core
//! abstractions"). Neither reads a clock, sleeps or touches a socket: the driver (the simulator,
//! the UDP transport, or Python) feeds events with the current time and polls for output. The
//! contract, the same for both sides:
//!
//! 1. After any event ([`Endpoint::on_packet`], [`Endpoint::on_timeout`], or construction), call
//!    [`Endpoint::poll_transmit`] until it returns `None`, and send what it returns.
//! 2. Then ask [`Endpoint::next_timeout`]; when the clock reaches it, call
//!    [`Endpoint::on_timeout`] and go back to 1. A rate-paced sender reports its next send time
//!    here, so the pacing clock and the protocol timers are one deadline.
//! 3. Calling `on_timeout` early, or twice for one deadline, is a harmless no-op: endpoints
//!    compare `now` against their own deadlines.
//!
//! Time never goes backwards between calls; endpoints may `debug_assert!` it.

use crate::packet::Packet;
use crate::time::{Dur, Time};

/// The events and polls shared by senders and receivers.
pub trait Endpoint {
    /// A packet from the peer arrived at `now`.
    fn on_packet(&mut self, now: Time, pkt: &Packet);
    /// The deadline from [`Endpoint::next_timeout`] has passed (or may have: see the module doc).
    fn on_timeout(&mut self, now: Time);
    /// The next packet to send at `now`, if any is due.
    #[must_use]
    fn poll_transmit(&mut self, now: Time) -> Option<Packet>;
    /// The earliest time at which the endpoint wants [`Endpoint::on_timeout`]; `None` if it is
    /// idle until a packet arrives.
    #[must_use]
    fn next_timeout(&self) -> Option<Time>;
    /// A snapshot of the endpoint's state for recording and reporting.
    fn stats(&self) -> Stats;
}

/// The data-sending side of a protocol.
pub trait Sender: Endpoint {
    /// The transport could not send the packet just returned by `poll_transmit` (a full socket
    /// buffer, 004 Sec. 3.6.3). Protocols that react to it override this; the default ignores it.
    fn on_send_error(&mut self, _now: Time) {}
    /// Limit the data the application has to send: `None` is a bulk (always backlogged) source,
    /// `Some(bytes)` adds that many bytes to the send buffer.
    fn offer(&mut self, _bytes: Option<u64>) {}
    /// Application bytes offered and not yet sent (the send buffer); `None` for a bulk source
    /// and for senders that do not tell. A media source that adapts to its sender reads it at
    /// each frame (002 Sec. 6.2's `get_sbuf_len()`); through the trait so that the real-time
    /// feed (tfcc-net's `VideoFeed`) reads it from any sender, as the simulator does.
    fn buffered(&self) -> Option<u64> {
        None
    }
    /// Application bytes sent, headers excluded: what a media source set against the bytes it
    /// offered (offered = this + [`Self::buffered`]). `None` for senders that do not tell.
    /// Through the trait, as `buffered`, so that `tfcc send` and the testbed account for any
    /// video-fed sender the same way ([`Stats::bytes_sent`] counts payload for TFRC, whose
    /// header rides on top of `s`, and whole packets for TFWC).
    fn payload_sent(&self) -> Option<u64> {
        None
    }
    /// Count the loss events the sender locates itself again from `from` on
    /// ([`Self::loss_events_since`]): a measurement window's start. The simulator's summary
    /// and the testbed's both count through this, so a window's `loss_event_rate` has one
    /// definition on both backends. The default is a sender that counts none (TFRC and the
    /// rate senders, whose receivers keep the loss history).
    fn count_loss_events_from(&mut self, _from: Time) {}
    /// The loss events located at or after the time given to
    /// [`Self::count_loss_events_from`] (the start of the run if none was), each where the
    /// sender places it, so that each is one of the window's packets sent; `None` for a sender
    /// that counts no loss events of its own.
    fn loss_events_since(&self) -> Option<u64> {
        None
    }
}

/// The data-receiving side of a protocol.
pub trait Receiver: Endpoint {
    /// Payload bytes delivered to the application so far (goodput accounting).
    fn delivered_bytes(&self) -> u64;
}

/// A uniform snapshot of congestion-control state, the same shape for every protocol so that the
/// simulator, the testbed and Python record them alike. Fields a protocol does not have are `None`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Congestion window in packets (window-based protocols).
    pub cwnd: Option<f64>,
    /// Rate in **bytes** per second: a rate-based sender's allowed sending rate (TFRC's `X`, a
    /// rate sender's, CBR's), a TFRC receiver's receive rate `X_recv`. Bytes/s because the
    /// protocols compute in it: it is RFC 5348's unit for `X` and thesis 004's ("all rates are
    /// in bytes/s", spec 004), and the equations' (`Equation::rate`). DESIGN.md's bits/s is the
    /// unit of everything that leaves the core, each with its unit in its name and converted
    /// (×8) once: `rate_bps` in timeseries.parquet (tfcc-sim's recorder, the testbed's), the
    /// `rate_Mbps` column of `tfcc send`, `rate_bps` beside `rate` in Python's `stats()`.
    pub rate: Option<f64>,
    /// Loss event rate estimate `p` (equation-based protocols) or the measured loss ratio.
    pub p: Option<f64>,
    /// Average loss interval in packets, `1/p`.
    pub ali: Option<f64>,
    /// Smoothed round-trip time.
    pub rtt: Option<Dur>,
    /// Retransmission or no-feedback timeout currently in force.
    pub rto: Option<Dur>,
    /// Data packets handed to the network (retransmissions included).
    pub packets_sent: u64,
    /// Data bytes handed to the network (retransmissions included).
    pub bytes_sent: u64,
    /// Retransmitted packets (reliable protocols only).
    pub retransmits: u64,
    /// Loss events seen: window or rate reductions caused by a detected loss. For TCP, fast
    /// retransmits plus retransmission timeouts, less the timeouts found spurious
    /// ([`Stats::spurious_timeouts`]); a timeout counts once resolved as a loss (the ACK that
    /// next moves the ACK point shows its retransmission got through), and one whose outcome is
    /// not known yet (no such ACK since, e.g. at the end of a run) is not a loss event.
    pub loss_events: u64,
    /// Data packets a receiver's loss detector has judged, received or lost
    /// ([`crate::loss_events::DetectorStats::judged`]): TFRC's receiver and the round receiver
    /// of WARC, TEAR and TFRCP. For those that count [`Stats::loss_events`] themselves (TFRC,
    /// WARC, TEAR) the denominator of their loss event rate over a window (tfcc-sim's summary,
    /// the testbed's): the events and the packets they are counted among are then both the
    /// receiver's, counted at the same place and time, so the rate is at most 1. 0 for senders
    /// and for receivers without a detector.
    pub packets_judged: u64,
    /// Retransmission or no-feedback timer expiries, whatever their outcome (TCP's include
    /// those not resolved yet as a loss or spurious).
    pub timeouts: u64,
    /// Of [`Stats::timeouts`], those found spurious: TCP's retransmission timeouts after which
    /// the ACK that moved past the timed-out segment echoed a send time from before the timeout,
    /// so an original copy arrived and nothing was lost (the Eifel test of RFC 3522 §3.2,
    /// counted only, with no response). 0 for protocols that do not tell.
    pub spurious_timeouts: u64,
    /// Protocol mode, e.g. "slowstart", "congestion-avoidance" (for plots and logs).
    pub mode: &'static str,
}
