//! The ACK-clocked loop the per-ACK benchmarks time: a sender and its receiver joined by an
//! instant, lossy path, so that one step costs what the endpoints do per packet and per ACK and
//! nothing else.

use std::collections::VecDeque;
use std::hint::black_box;

use tfcc_core::endpoint::Endpoint;
use tfcc_core::{Dur, Header, Packet, Time};

/// A sender `s` and receiver `k`; every 100th data packet is lost (never a TCP retransmission,
/// so that recovery completes), which exercises loss detection and, for SACK, the scoreboard.
pub struct LossyLoop<S, R> {
    pub s: S,
    pub k: R,
    flight: VecDeque<Packet>,
    now: Time,
    n: u64,
}

impl<S: Endpoint, R: Endpoint> LossyLoop<S, R> {
    pub fn new(s: S, k: R) -> Self {
        let mut l = LossyLoop {
            s,
            k,
            flight: VecDeque::with_capacity(256),
            now: Time::ZERO,
            n: 0,
        };
        l.drain();
        l
    }

    fn drain(&mut self) {
        while let Some(p) = self.s.poll_transmit(self.now) {
            self.flight.push_back(p);
        }
    }

    /// Deliver one packet (or lose it) and feed its acknowledgements back to the sender.
    pub fn step(&mut self) {
        self.now += Dur::from_micros(10);
        let Some(p) = self.flight.pop_front() else {
            // Everything in flight was lost: let the sender's timer fire.
            if let Some(t) = self.s.next_timeout() {
                self.now = self.now.max(t);
                self.s.on_timeout(self.now);
            }
            self.drain();
            return;
        };
        self.n += 1;
        let retransmit = matches!(p.header, Header::TcpData(d) if d.retransmit);
        if self.n % 100 != 0 || retransmit {
            self.k.on_packet(self.now, &p);
            while let Some(a) = self.k.poll_transmit(self.now) {
                self.s.on_packet(self.now, black_box(&a));
            }
        }
        self.drain();
    }

    /// `steps` steps, to leave slow start and fill the histories before timing.
    pub fn warm(mut self, steps: u32) -> Self {
        for _ in 0..steps {
            self.step();
        }
        self
    }
}
