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
use crate::pacing::Lateness;
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
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            spin: Dur::from_micros(100),
            rcvbuf: 4 << 20,
            sndbuf: 1 << 20,
            realtime: None,
            max_datagram: 65_535,
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
    /// Sends the kernel refused (full buffer, unreachable): reported to a sender endpoint.
    pub send_errors: u64,
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
    lateness: Lateness,
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
            lateness: Lateness::default(),
            buf,
            fill: None,
            deliver: None,
            send_error: no_send_error::<E>,
            delivered: nothing_delivered::<E>,
            last: Time::ZERO,
            readable: true,
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

    /// Lateness of paced sends (= inter-packet gap error for self-clocked pacers).
    pub fn lateness(&self) -> &Lateness {
        &self.lateness
    }

    /// Payload bytes the receiver endpoint delivered (0 for a sender).
    pub fn delivered_bytes(&self) -> u64 {
        (self.delivered)(&self.ep)
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
        let now = self.tick();
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

    /// The clock, never behind what the endpoint has been told.
    fn tick(&mut self) -> Time {
        self.last = self.clock.now().max(self.last);
        self.last
    }

    /// Sends what the endpoint has to send now, at most [`BURST`] packets (so that a sender
    /// whose rate outruns the CPU still gets to read feedback and to notice the end).
    fn flush(&mut self) {
        for _ in 0..BURST {
            let requested = self.ep.next_timeout();
            let now = self.tick();
            let Some(pkt) = self.ep.poll_transmit(now) else {
                return;
            };
            if let Some(t) = requested.filter(|&t| t <= now) {
                self.lateness.record(now - t);
            }
            self.send(now, &pkt);
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
            Err(_) => {
                self.counters.send_errors += 1;
                (self.send_error)(&mut self.ep, now);
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
                continue;
            }
            if self.peer_fixed && Some(r.from) != self.peer {
                self.counters.unexpected += 1;
                continue;
            }
            let (header, at) = match wire::decode(self.proto, self.incoming, &self.buf[..r.len]) {
                Ok(h) => h,
                Err(_) => {
                    self.counters.malformed += 1;
                    continue;
                }
            };
            if !self.peer_fixed {
                match self.peer {
                    None => self.peer = Some(r.from),
                    Some(p) if p != r.from => {
                        self.counters.unexpected += 1;
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
            let pkt = Packet {
                size: u32::try_from(r.len).unwrap_or(u32::MAX),
                header,
            };
            self.ep.on_packet(t, &pkt);
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
