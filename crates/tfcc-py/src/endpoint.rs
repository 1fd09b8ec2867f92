//! What the Python endpoint classes (`tfrc.rs`, `tfwc.rs`) share: the application's clock and
//! the size of a datagram as a packet.
//!
//! Each class holds a [`Clocked`] core endpoint and forwards to it; `#[pymethods]` cannot be
//! generic, so the methods themselves stand once per class, but what they do (clamp the clock,
//! call the core, convert the time back to nanoseconds) is written here once.

use tfcc_core::endpoint::Endpoint;
use tfcc_core::{Packet, Stats, Time};

/// A core endpoint driven by the application's clock, integer nanoseconds on any monotonic
/// clock. Time moves forward only: a call with an earlier `now` than the last is taken at the
/// last.
pub(crate) struct Clocked<E> {
    pub(crate) inner: E,
    last: Time,
}

impl<E: Endpoint> Clocked<E> {
    pub(crate) fn new(inner: E) -> Self {
        Clocked {
            inner,
            last: Time::ZERO,
        }
    }

    /// `now_ns` as the endpoint's time, never before the last call's.
    pub(crate) fn now(&mut self, now_ns: u64) -> Time {
        self.last = self.last.max(Time(now_ns));
        self.last
    }

    /// A packet arrived at `now_ns`.
    pub(crate) fn on_packet(&mut self, now_ns: u64, pkt: &Packet) {
        let now = self.now(now_ns);
        self.inner.on_packet(now, pkt);
    }

    /// The clock reached `now_ns` (early or twice is harmless).
    pub(crate) fn on_timeout(&mut self, now_ns: u64) {
        let now = self.now(now_ns);
        self.inner.on_timeout(now);
    }

    /// The packet due at `now_ns`, if any.
    pub(crate) fn poll_transmit(&mut self, now_ns: u64) -> Option<Packet> {
        let now = self.now(now_ns);
        self.inner.poll_transmit(now)
    }

    /// The endpoint's next timer, in nanoseconds.
    pub(crate) fn next_timeout_ns(&self) -> Option<u64> {
        self.inner.next_timeout().map(|t| t.0)
    }

    pub(crate) fn stats(&self) -> Stats {
        self.inner.stats()
    }
}

/// A datagram's length as a packet size (saturating: a UDP datagram is far below `u32::MAX`).
pub(crate) fn datagram_size(datagram: &[u8]) -> u32 {
    u32::try_from(datagram.len()).unwrap_or(u32::MAX)
}
