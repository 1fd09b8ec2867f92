//! The TFWC receiver (002 Sec. 3.2.1): keep the Ack Vector, prune it at the sender's Ack of
//! Ack, and answer every data packet with it, echoing the packet's send time for the RTT.

use super::ack_vector::AckVector;
use super::config::TfwcConfig;
use crate::endpoint::{Endpoint, Receiver, Stats};
use crate::packet::{Header, Packet};
use crate::time::Time;

/// TFWC receiver: answers every data packet with one ACK carrying the Ack Vector and the
/// packet's send time ([`Header::TfwcAck`]), pruned at the sender's Ack of Ack.
#[derive(Clone, Debug)]
pub struct TfwcReceiver {
    ack_size: u32,
    vector: Option<AckVector>,
    /// Send time of the latest arrival, echoed in the next ACK.
    echo: Time,
    /// ACKs owed: one per data packet ("one Ack message generation upon reception of every
    /// data packet", 002 Sec. 5.1).
    owed: u32,
    delivered: u64,
    received: u64,
}

impl TfwcReceiver {
    /// A receiver; of `cfg` it uses only the ACK size.
    pub fn new(cfg: &TfwcConfig) -> TfwcReceiver {
        TfwcReceiver {
            ack_size: cfg.ack_size,
            vector: None,
            echo: Time::ZERO,
            owed: 0,
            delivered: 0,
            received: 0,
        }
    }

    /// The Ack Vector as it stands (`None` before the first data packet).
    pub fn vector(&self) -> Option<AckVector> {
        self.vector
    }
}

impl Endpoint for TfwcReceiver {
    fn on_packet(&mut self, _now: Time, pkt: &Packet) {
        let Header::TfwcData { seq, sent_at, aoa } = pkt.header else {
            return;
        };
        let v = self.vector.get_or_insert(AckVector::starting_at(seq));
        v.record(seq);
        if let Some(a) = aoa {
            v.prune(a);
        }
        self.echo = sent_at;
        self.owed = self.owed.saturating_add(1);
        self.delivered += u64::from(pkt.size);
        self.received += 1;
    }

    fn on_timeout(&mut self, _now: Time) {}

    fn poll_transmit(&mut self, _now: Time) -> Option<Packet> {
        if self.owed == 0 {
            return None;
        }
        self.owed -= 1;
        let vector = self.vector?;
        Some(Packet {
            size: self.ack_size,
            header: Header::TfwcAck {
                vector,
                echo: self.echo,
            },
        })
    }

    fn next_timeout(&self) -> Option<Time> {
        None
    }

    fn stats(&self) -> Stats {
        Stats {
            packets_sent: 0,
            mode: "receiver",
            ..Stats::default()
        }
    }
}

impl Receiver for TfwcReceiver {
    fn delivered_bytes(&self) -> u64 {
        self.delivered
    }
}
