//! A session: one sans-IO endpoint driven by a UDP socket and the monotonic clock.
//!
//! The loop follows the endpoint contract (tfcc_core::endpoint): read every queued datagram
//! (each handed to `on_packet` with its kernel receive time), fire due timers, drain
//! `poll_transmit`, then wait for the earlier of the endpoint's deadline and the next datagram.
//! Waiting sleeps in `ppoll` until [`SessionConfig::spin`] before the deadline and spins the
//! rest, which is what makes pacing accurate to microseconds on a VM whose timer wake-ups are
//! tens of microseconds late (measured in the tests below and in bench/RESULTS.md).
//!
//! Single-threaded and allocation-free per packet: one datagram buffer is allocated with the
//! session. Datagrams that do not decode, come from another peer, or travel the wrong way are
//! dropped and counted in [`Counters`]; nothing a peer sends can make the session panic.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

use tfcc_core::endpoint::{Endpoint, Receiver, Sender};
use tfcc_core::{Dur, Packet, Time};

use crate::clock::Clock;
use crate::pacing::{GapError, Lateness};
use crate::seqs::SeqLedger;
use crate::socket::{Socket, Woke};
use crate::wire::{self, Direction, Protocol, WireError};

/// Transport knobs. The defaults suit a LAN or an emulated bottleneck up to a few hundred Mb/s.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// How long before a deadline the session stops sleeping and spins on the clock. The VM this
    /// was developed on wakes from `ppoll` 50–70 µs late (with 1 ns timer slack); 100 µs of
    /// spinning absorbs that at the cost of at most 100 µs of CPU per wait.
    pub spin: Dur,
    /// Kernel receive buffer in bytes (`SO_RCVBUF`; 0 keeps the system default). 4 MiB holds
    /// more than a 100 ms RTT of data at 100 Mb/s, so a busy receiver does not drop.
    pub rcvbuf: usize,
    /// Kernel send buffer in bytes (`SO_SNDBUF`; 0 keeps the default). A full buffer is a send
    /// error for the protocol (004 Sec. 3.6.3).
    pub sndbuf: usize,
    /// Run the session's thread under `SCHED_FIFO` at this priority (1–99; needs root or
    /// CAP_SYS_NICE, and fails the session's construction otherwise). On a loaded machine
    /// normal priority leaves paced sends milliseconds late at the 99th percentile (measured:
    /// p99 7 ms with the 2 cores' load average at 8); `None` (default) keeps normal priority.
    pub realtime: Option<i32>,
    /// The largest datagram accepted; longer ones are counted as truncated and dropped.
    pub max_datagram: usize,
    /// How late a due send (or timer) may be and still be handed to the endpoint at the time
    /// it asked for rather than at the time it is served. A rate-paced endpoint computes its
    /// next send time from the time it is polled (TFRC: a gap of `s/b_act` after each packet,
    /// 004 Sec. 3.5.1), so
    /// every microsecond of wake-up or syscall lateness would otherwise lengthen the gap and
    /// lower the rate below `X`: at 500 Mb/s (23 µs per 1460-byte packet) a 10 µs lateness
    /// costs 30 %. Within `catch_up` the pacer keeps the endpoint's grid and sends the packets
    /// that fell due meanwhile back to back; a send later than that (the thread was stalled)
    /// is served at the time it goes out and the lost time is not made up with a burst. The
    /// thesis is silent on a late timer (its sender ran on a kernel timer) and says packets are
    /// never sent back to back (004 Sec. 3.5.1): with 50 µs that rule holds wherever the gap
    /// is longer than 50 µs (below 234 Mb/s for 1460-byte packets, so at every rate of the
    /// theses), and above it at most two or three packets go together (the gap is 23 µs at
    /// 500 Mb/s). The packet's timestamp is its scheduled time, at most `catch_up` before it
    /// leaves, which the RTT samples include. `Dur::ZERO` disables catching up.
    pub catch_up: Dur,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            spin: Dur::from_micros(100),
            rcvbuf: 4 << 20,
            sndbuf: 1 << 20,
            realtime: None,
            max_datagram: 65_535,
            catch_up: Dur::from_micros(50),
        }
    }
}

/// What the session saw, beyond the endpoint's own [`tfcc_core::Stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Datagrams handed to the kernel.
    pub sent: u64,
    /// Bytes of those datagrams (UDP payload).
    pub sent_bytes: u64,
    /// Sends the kernel refused, for any reason. None of them ends the session.
    pub send_errors: u64,
    /// Those of [`Self::send_errors`] refused because the socket's or the device queue's
    /// buffer was full (`EAGAIN`/`EWOULDBLOCK`, `ENOBUFS`): the packet is not sent and not
    /// retried, and a sender endpoint is told, which treats it as a congestion signal (004
    /// Sec. 3.6.3: the receiver sees a loss; a sender in slowstart enters Forced Congestion
    /// Control). Other refusals (an unreachable peer) only lose the packet.
    pub buffer_full: u64,
    /// Datagrams accepted and given to the endpoint.
    pub received: u64,
    /// UDP payload bytes of those datagrams.
    pub received_bytes: u64,
    /// Datagrams that did not decode as the protocol's header for this direction.
    pub malformed: u64,
    /// Datagrams from an address other than the peer's.
    pub unexpected: u64,
    /// Datagrams longer than [`SessionConfig::max_datagram`].
    pub truncated: u64,
    /// Datagrams without a kernel timestamp (stamped with the time they were read instead).
    pub unstamped: u64,
    /// Socket read errors other than "nothing queued" (ICMP errors and the like).
    pub recv_errors: u64,
}

/// Why a datagram was dropped, for [`Session::first_drop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// It did not decode as the session's protocol and direction ([`Counters::malformed`]).
    Malformed(WireError),
    /// It came from another address than the peer's ([`Counters::unexpected`]).
    Unexpected,
    /// It was longer than [`SessionConfig::max_datagram`] ([`Counters::truncated`]).
    Truncated,
}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DropReason::Malformed(e) => write!(f, "malformed: {e}"),
            DropReason::Unexpected => f.write_str("not from the peer"),
            DropReason::Truncated => f.write_str("longer than the largest datagram accepted"),
        }
    }
}

/// Most datagrams sent or read in one go before the session looks at its clock again.
const BURST: usize = 64;

/// Fills the payload region of an outgoing data packet.
pub type FillFn = Box<dyn FnMut(&mut [u8])>;
/// Receives the payload of each accepted data packet.
pub type DeliverFn = Box<dyn FnMut(&[u8])>;

/// One endpoint on one socket. Build with [`Session::sender`] or [`Session::receiver`].
pub struct Session<E: Endpoint> {
    ep: E,
    proto: Protocol,
    /// The direction of the datagrams this side receives.
    incoming: Direction,
    sock: Socket,
    clock: Clock,
    peer: Option<SocketAddr>,
    /// The receiver learns its peer from the first valid data packet; a sender is told.
    peer_fixed: bool,
    cfg: SessionConfig,
    counters: Counters,
    /// The first datagram dropped: who sent it and why (the counters say how many followed).
    first_drop: Option<(SocketAddr, DropReason)>,
    /// The first error the kernel gave for a send, for [`Self::first_send_error`].
    first_send_error: Option<io::ErrorKind>,
    lateness: Lateness,
    gap: GapError,
    /// The previous paced send: (time the endpoint was given, clock time it went out).
    prev_send: Option<(Time, Time)>,
    /// When the application last offered a sender data ([`Session::offer`]): a send time the
    /// endpoint had set before then, while it had nothing to send, is not a pacing deadline.
    offered_at: Option<Time>,
    buf: Box<[u8]>,
    fill: Option<FillFn>,
    deliver: Option<DeliverFn>,
    send_error: fn(&mut E, Time),
    delivered: fn(&E) -> u64,
    /// The latest time given to the endpoint: kernel stamps older than it are raised to it, so
    /// the endpoint never sees time go backwards.
    last: Time,
    /// The last wait ended because a datagram was readable (or no wait has happened yet).
    readable: bool,
    /// The `end` of the latest [`Session::step`], and the payload bytes delivered since it
    /// was set by datagrams whose kernel stamp is after it: read in the wake-up that ended the
    /// slice, late, they belong to the next one ([`Session::delivered_bytes_by_end`]).
    slice_end: Time,
    after_end: u64,
    /// The data sequence numbers a receiver accepted (empty for a sender).
    seqs: SeqLedger,
    /// Once asked for ([`Session::keep_data_arrivals`]): each data packet a receiver accepted,
    /// as (the time the endpoint was given for it, its sequence number).
    arrivals: Option<Vec<(Time, u64)>>,
    /// Once asked for ([`Session::keep_data_sent`]): each data packet a sender's endpoint
    /// handed out, as (its sequence number, the bytes its send buffer shrank by).
    sent_data: Option<Vec<(u64, u64)>>,
    /// The endpoint's send buffer ([`Sender::buffered`]; `None` for a receiver).
    buffered: fn(&E) -> Option<u64>,
}

fn sender_error<S: Sender>(s: &mut S, now: Time) {
    s.on_send_error(now);
}
fn no_send_error<E>(_: &mut E, _: Time) {}
fn receiver_delivered<R: Receiver>(r: &R) -> u64 {
    r.delivered_bytes()
}
fn nothing_delivered<E>(_: &E) -> u64 {
    0
}
fn sender_buffered<S: Sender>(s: &S) -> Option<u64> {
    s.buffered()
}
fn no_buffer<E>(_: &E) -> Option<u64> {
    None
}

impl<E: Endpoint> Session<E> {
    fn build(
        ep: E,
        proto: Protocol,
        incoming: Direction,
        bind: impl ToSocketAddrs,
        peer: Option<SocketAddr>,
        cfg: SessionConfig,
    ) -> io::Result<Self> {
        let sock = Socket::bind(bind, cfg.rcvbuf, cfg.sndbuf)?;
        if let Some(prio) = cfg.realtime {
            crate::socket::set_realtime(prio)?;
        }
        // One spare byte shows whether a datagram was longer than the maximum.
        let buf = vec![0u8; cfg.max_datagram.max(64) + 1].into_boxed_slice();
        Ok(Session {
            ep,
            proto,
            incoming,
            sock,
            clock: Clock::new(),
            peer_fixed: peer.is_some(),
            peer,
            cfg,
            counters: Counters::default(),
            first_drop: None,
            first_send_error: None,
            lateness: Lateness::default(),
            gap: GapError::default(),
            prev_send: None,
            offered_at: None,
            buf,
            fill: None,
            deliver: None,
            send_error: no_send_error::<E>,
            delivered: nothing_delivered::<E>,
            last: Time::ZERO,
            readable: true,
            slice_end: Time::ZERO,
            after_end: 0,
            seqs: SeqLedger::default(),
            arrivals: None,
            sent_data: None,
            buffered: no_buffer::<E>,
        })
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &E {
        &self.ep
    }

    /// The endpoint, for configuration between steps.
    pub fn endpoint_mut(&mut self) -> &mut E {
        &mut self.ep
    }

    /// Session time now (nanoseconds since the session was built).
    pub fn now(&self) -> Time {
        self.clock.now()
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// The peer's address: given to a sender, learnt by a receiver.
    pub fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The first datagram the session dropped (malformed, from a stranger, or too long): its
    /// sender and the reason. A driver can report it once instead of once per datagram; how
    /// many were dropped is in [`Self::counters`].
    pub fn first_drop(&self) -> Option<(SocketAddr, DropReason)> {
        self.first_drop
    }

    /// The kind of the first error the kernel returned for a send (an unreachable network, a
    /// datagram too long, an IPv6 peer on an IPv4 socket, a full buffer), if any; how many
    /// sends failed is in [`Counters::send_errors`].
    pub fn first_send_error(&self) -> Option<io::ErrorKind> {
        self.first_send_error
    }

    /// Lateness of paced sends: the clock when a due packet went out minus the time its
    /// endpoint asked for.
    pub fn lateness(&self) -> &Lateness {
        &self.lateness
    }

    /// The error of inter-packet gaps (issue 11's pacing measure): for each paced send after
    /// another, the actual gap between the two minus the gap the endpoint scheduled (its
    /// requested time minus the time it was given for the previous send).
    pub fn gap_error(&self) -> &GapError {
        &self.gap
    }

    /// The data sequence numbers a receiving session accepted, duplicates once: what the
    /// testbed sets against the packets its relay handed to the bottleneck queue to count the
    /// flow's losses there. Empty for a sender.
    pub fn received_seqs(&self) -> &SeqLedger {
        &self.seqs
    }

    /// From now on, keep each data packet a receiver accepts with its time, for
    /// [`Self::take_data_arrivals`]: what the testbed matches to a video flow's frames
    /// (tfcc_sim::frames). Off by default (memory per packet).
    pub fn keep_data_arrivals(&mut self) {
        self.arrivals.get_or_insert_with(Vec::new);
    }

    /// The data packets accepted since the last call, in the order they were handed to the
    /// endpoint: (session time the endpoint was given for it, which is its kernel receive
    /// stamp unless that was older than a time the endpoint had already seen; its sequence
    /// number). A duplicate is listed again. Empty unless [`Self::keep_data_arrivals`].
    pub fn take_data_arrivals(&mut self) -> Vec<(Time, u64)> {
        self.arrivals
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Payload bytes the receiver endpoint delivered (0 for a sender).
    pub fn delivered_bytes(&self) -> u64 {
        (self.delivered)(&self.ep)
    }

    /// [`Self::delivered_bytes`] by the `end` of the latest [`Self::step`] (or
    /// [`Self::run_until`]), by the datagrams' kernel stamps: what a per-interval figure read
    /// at that end should count. The wake-up that ends a slice can come late (milliseconds on
    /// a loaded host) and reads what arrived meanwhile, after the end; those bytes are
    /// delivered at once but count here only once a later slice's end is past them. (Without
    /// this, `tfcc recv`'s second to 5.0 s of a stream paused in 3-5 s showed the first frame
    /// after the pause, under load: tfcc-net's video test.)
    pub fn delivered_bytes_by_end(&self) -> u64 {
        self.delivered_bytes() - self.after_end
    }

    /// Sets the source of outgoing payload (default: zeros).
    pub fn on_fill(&mut self, f: impl FnMut(&mut [u8]) + 'static) {
        self.fill = Some(Box::new(f));
    }

    /// Sets the sink of incoming payload.
    pub fn on_deliver(&mut self, f: impl FnMut(&[u8]) + 'static) {
        self.deliver = Some(Box::new(f));
    }

    /// Runs the session until session time `end`.
    pub fn run_until(&mut self, end: Time) -> io::Result<()> {
        while self.step(end)? {}
        Ok(())
    }

    /// One round: timers, sends, receives, then a wait no later than `end`. Returns `false`
    /// once the clock has reached `end`.
    pub fn step(&mut self, end: Time) -> io::Result<bool> {
        if end != self.slice_end {
            // A new slice: what came after the old end is within this one (unless the
            // wake-up was later than the whole slice, which then counts it here too).
            self.slice_end = end;
            self.after_end = 0;
        }
        // After a wait that the socket ended, datagrams first: they arrived while the session
        // waited, after every time the endpoint has been given, so they reach it with their
        // kernel stamps. Reading the clock first (as this loop once did) raised each stamp to
        // the moment of reading, so a late wake-up (tens of ms when the VM stalls the thread)
        // showed up in the receiver's receive rate and in the sender's RTT samples. A timer
        // that fell due before such a datagram arrived now fires after it is handled (the
        // simulator fires it before); that can only happen when the session is woken late.
        // After a wait that ran to its deadline, the due send goes first (a read there would
        // only add a syscall to the pacing error); a datagram that came in during the final
        // spin is raised by at most the spin.
        let readable = self.readable;
        if readable {
            self.drain()?;
        }
        let (now, _) = self.tick();
        if self.ep.next_timeout().is_some_and(|t| t <= now) {
            self.ep.on_timeout(now);
        }
        self.flush();
        if !readable {
            self.drain()?;
        }
        if self.clock.now() >= end {
            return Ok(false);
        }
        let deadline = self.ep.next_timeout().map_or(end, |t| t.min(end));
        self.wait_until(deadline)?;
        Ok(true)
    }

    /// The time to hand the endpoint, and the clock. It is the clock, never behind what the
    /// endpoint has been told, except that a deadline of the endpoint's that passed at most
    /// [`SessionConfig::catch_up`] ago is served at the deadline itself.
    fn tick(&mut self) -> (Time, Time) {
        let now = self.clock.now();
        let t = match self.ep.next_timeout() {
            Some(due) if due <= now && now - due <= self.cfg.catch_up => due,
            _ => now,
        };
        self.last = t.max(self.last);
        (self.last, now)
    }

    /// Sends what the endpoint has to send now, at most [`BURST`] packets (so that a sender
    /// whose rate outruns the CPU still gets to read feedback and to notice the end).
    fn flush(&mut self) {
        for _ in 0..BURST {
            let requested = self.ep.next_timeout();
            let (t, now) = self.tick();
            let before = match self.sent_data {
                Some(_) => (self.buffered)(&self.ep),
                None => None,
            };
            let Some(pkt) = self.ep.poll_transmit(t) else {
                return;
            };
            if let (Some(log), Some(b0)) = (self.sent_data.as_mut(), before) {
                if let Some(seq) = wire::data_seq(&pkt.header) {
                    let after = (self.buffered)(&self.ep).unwrap_or(0);
                    log.push((seq, b0.saturating_sub(after)));
                }
            }
            // A send the endpoint had asked for (not one a report triggered) is paced; one
            // whose time passed while an application-limited sender had nothing to send went
            // out when the data came, not late, and the next gap counts from it.
            let idle = requested.is_some_and(|r| self.offered_at.is_some_and(|o| r < o));
            if idle {
                self.prev_send = Some((t, now));
            } else if let Some(r) = requested.filter(|&r| r <= now) {
                self.lateness.record(now - r);
                // Scheduled gap: from the time the endpoint was given for the previous send to
                // this send's requested time (0 if it wanted this one before the previous left,
                // as a CBR source that is behind its schedule does).
                if let Some((given, at)) = self.prev_send {
                    self.gap.record(now - at, Dur(r.0.saturating_sub(given.0)));
                }
                self.prev_send = Some((t, now));
            } else {
                self.prev_send = None;
            }
            self.send(t, &pkt);
        }
    }

    fn send(&mut self, now: Time, pkt: &Packet) {
        let Some(peer) = self.peer else {
            // A receiver with no peer yet has nobody to answer; cannot happen for TFRC, whose
            // receiver only reports after a data packet.
            self.counters.send_errors += 1;
            return;
        };
        let fill = self
            .fill
            .as_mut()
            .map(|f| f.as_mut() as &mut dyn FnMut(&mut [u8]));
        let len = match wire::encode(self.proto, pkt, &mut self.buf, fill) {
            Ok(n) => n,
            Err(WireError::Mismatch) | Err(_) => {
                self.counters.send_errors += 1;
                return;
            }
        };
        match self.sock.send_to(&self.buf[..len], peer) {
            Ok(_) => {
                self.counters.sent += 1;
                self.counters.sent_bytes += len as u64;
            }
            Err(e) => {
                self.counters.send_errors += 1;
                self.first_send_error.get_or_insert(e.kind());
                let full = e.kind() == io::ErrorKind::WouldBlock
                    || e.raw_os_error() == Some(libc::ENOBUFS);
                if full {
                    self.counters.buffer_full += 1;
                    (self.send_error)(&mut self.ep, now);
                }
            }
        }
    }

    /// Reads queued datagrams, at most [`BURST`] (a peer faster than this loop must not keep
    /// it here forever), each handed to the endpoint at its kernel receive time, then sends
    /// what they called for.
    fn drain(&mut self) -> io::Result<()> {
        self.read_queued()?;
        self.flush();
        Ok(())
    }

    /// The reading half of [`Self::drain`]. Nothing is sent between two reads: a send reads
    /// the clock and gives the endpoint that time, and every datagram still queued behind
    /// it would then have its kernel stamp raised to it.
    fn read_queued(&mut self) -> io::Result<()> {
        for _ in 0..BURST {
            let r = match self.sock.recv(&mut self.buf) {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(_) => {
                    // ICMP errors and the like: counted, the flow goes on.
                    self.counters.recv_errors += 1;
                    return Ok(());
                }
            };
            if r.truncated || r.len > self.cfg.max_datagram {
                self.counters.truncated += 1;
                self.first_drop
                    .get_or_insert((r.from, DropReason::Truncated));
                continue;
            }
            if self.peer_fixed && Some(r.from) != self.peer {
                self.counters.unexpected += 1;
                self.first_drop
                    .get_or_insert((r.from, DropReason::Unexpected));
                continue;
            }
            let (header, at) = match wire::decode(self.proto, self.incoming, &self.buf[..r.len]) {
                Ok(h) => h,
                Err(e) => {
                    self.counters.malformed += 1;
                    self.first_drop
                        .get_or_insert((r.from, DropReason::Malformed(e)));
                    continue;
                }
            };
            if !self.peer_fixed {
                match self.peer {
                    None => self.peer = Some(r.from),
                    Some(p) if p != r.from => {
                        self.counters.unexpected += 1;
                        self.first_drop
                            .get_or_insert((r.from, DropReason::Unexpected));
                        continue;
                    }
                    Some(_) => {}
                }
            }
            let arrived = match r.stamp {
                Some(s) => self.clock.from_realtime_ns(s),
                None => {
                    self.counters.unstamped += 1;
                    self.clock.now()
                }
            };
            let t = arrived.max(self.last);
            self.last = t;
            self.counters.received += 1;
            self.counters.received_bytes += r.len as u64;
            if self.incoming == Direction::Data {
                if let Some(seq) = wire::data_seq(&header) {
                    self.seqs.record(seq);
                    if let Some(a) = self.arrivals.as_mut() {
                        a.push((t, seq));
                    }
                }
            }
            let pkt = Packet {
                size: u32::try_from(r.len).unwrap_or(u32::MAX),
                header,
            };
            // Only a datagram stamped after the slice's end needs its delivered bytes apart.
            let late = (arrived > self.slice_end).then(|| self.delivered_bytes());
            self.ep.on_packet(t, &pkt);
            if let Some(before) = late {
                self.after_end += self.delivered_bytes() - before;
            }
            if let Some(d) = self.deliver.as_mut() {
                d(&self.buf[at..r.len]);
            }
        }
        Ok(())
    }

    /// Sleeps (then spins) until `deadline` or until a datagram is readable.
    fn wait_until(&mut self, deadline: Time) -> io::Result<()> {
        self.readable = false;
        loop {
            let now = self.clock.now();
            if now >= deadline {
                return Ok(());
            }
            let left = deadline - now;
            if left > self.cfg.spin {
                if self.sock.wait((left - self.cfg.spin).0)? == Woke::Readable {
                    self.readable = true;
                    return Ok(());
                }
            } else {
                while self.clock.now() < deadline {
                    std::hint::spin_loop();
                }
                return Ok(());
            }
        }
    }
}

impl<S: Sender> Session<S> {
    /// The application has `bytes` more to send ([`Sender::offer`]; `None` makes the sender
    /// bulk). They go out from the next [`Self::step`]. Offering through the session rather
    /// than [`Self::endpoint_mut`] keeps the pacing measures honest: a send time that passed
    /// while the sender had nothing to send is not counted as lateness.
    pub fn offer(&mut self, bytes: Option<u64>) {
        self.offered_at = Some(self.clock.now());
        self.ep.offer(bytes);
    }

    /// From now on, keep each data packet a sender's endpoint hands out with the bytes its
    /// send buffer ([`Sender::buffered`]) shrank by, for [`Self::take_data_sent`]: a video
    /// flow's frames are followed byte by byte through that buffer (tfcc_sim::frames, which
    /// the simulator drives the same way). Off by default (two buffer reads per packet).
    pub fn keep_data_sent(&mut self) {
        self.sent_data.get_or_insert_with(Vec::new);
    }

    /// The data packets the endpoint handed out since the last call, in order: (sequence
    /// number, bytes the send buffer shrank by). A packet the kernel then refused is listed
    /// too (it is lost, as on a full interface queue). Empty unless [`Self::keep_data_sent`]
    /// or for an endpoint that does not report its send buffer.
    pub fn take_data_sent(&mut self) -> Vec<(u64, u64)> {
        self.sent_data
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// A sending session on a socket bound to `bind`, sending to `peer`.
    pub fn sender(
        ep: S,
        proto: Protocol,
        bind: impl ToSocketAddrs,
        peer: SocketAddr,
        cfg: SessionConfig,
    ) -> io::Result<Self> {
        let mut s = Self::build(ep, proto, Direction::Feedback, bind, Some(peer), cfg)?;
        s.send_error = sender_error::<S>;
        s.buffered = sender_buffered::<S>;
        Ok(s)
    }
}

impl<R: Receiver> Session<R> {
    /// A receiving session on a socket bound to `bind`; it answers the first sender it hears.
    pub fn receiver(
        ep: R,
        proto: Protocol,
        bind: impl ToSocketAddrs,
        cfg: SessionConfig,
    ) -> io::Result<Self> {
        let mut s = Self::build(ep, proto, Direction::Data, bind, None, cfg)?;
        s.delivered = receiver_delivered::<R>;
        Ok(s)
    }
}
