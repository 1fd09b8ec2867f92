//! The TFWC receiver (002 Sec. 3.2.3): keep the Ack Vector, prune it at the sender's Ack of
//! Ack, and answer every data packet with it, echoing the packet's send time for the RTT.

use super::ack_vector::{AckVector, Coverage};
use super::config::TfwcConfig;
use crate::endpoint::{Endpoint, Receiver, Stats};
use crate::packet::{Header, Packet};
use crate::time::Time;

/// TFWC receiver: answers every data packet with one ACK carrying the Ack Vector and the
/// packet's send time ([`Header::TfwcAck`]), pruned at the sender's Ack of Ack.
#[derive(Clone, Debug)]
pub struct TfwcReceiver {
    ack_size: u32,
    header_size: u32,
    vector: Option<AckVector>,
    /// Arrivals, unpruned: which sequence numbers have been delivered (duplicates).
    seen: Option<AckVector>,
    /// Send time of the latest arrival, echoed in the next ACK.
    echo: Time,
    /// ACKs owed: one per data packet ("one Ack message generation upon reception of every
    /// data packet", 002 Sec. 5.1).
    owed: u32,
    delivered: u64,
    received: u64,
}

impl TfwcReceiver {
    /// Bytes of every ACK on the wire: a scenario check needs it to tell whether a byte-limited
    /// queue on the way back can ever admit one.
    pub fn ack_size(&self) -> u32 {
        self.ack_size
    }

    /// A receiver; of `cfg` it uses only the ACK and header sizes.
    pub fn new(cfg: &TfwcConfig) -> TfwcReceiver {
        TfwcReceiver {
            ack_size: cfg.ack_size,
            header_size: cfg.header_size,
            vector: None,
            seen: None,
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
        // Goodput counts each sequence number once, and its payload only (as TFRC's receiver
        // does). `seen` is the vector without the Ack-of-Ack pruning; an arrival more than its
        // span behind the newest counts as a duplicate (a first arrival that late is lost to
        // the count, one packet).
        let first = match self.seen {
            None => true,
            Some(v) => v.coverage(seq) == Coverage::NotReceived,
        };
        self.seen
            .get_or_insert(AckVector::starting_at(seq))
            .record(seq);
        let v = self.vector.get_or_insert(AckVector::starting_at(seq));
        v.record(seq);
        if let Some(a) = aoa {
            v.prune(a);
        }
        self.echo = sent_at;
        self.owed = self.owed.saturating_add(1);
        if first {
            self.delivered += u64::from(pkt.size.saturating_sub(self.header_size));
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, aoa: Option<u64>) -> Packet {
        Packet {
            size: 1000,
            header: Header::TfwcData {
                seq,
                sent_at: Time::ZERO,
                aoa,
            },
        }
    }

    #[test]
    fn goodput_counts_each_packet_once_and_its_payload_only() {
        let cfg = TfwcConfig {
            header_size: 28,
            ..TfwcConfig::default()
        };
        let mut r = TfwcReceiver::new(&cfg);
        for seq in [0, 1, 2, 1, 4, 3, 3] {
            r.on_packet(Time::ZERO, &data(seq, None));
        }
        assert_eq!(r.delivered_bytes(), 5 * 972);
        // A duplicate of a number the Ack of Ack has pruned from the reported vector is still
        // a duplicate.
        r.on_packet(Time::ZERO, &data(5, Some(4)));
        r.on_packet(Time::ZERO, &data(2, None));
        assert_eq!(r.delivered_bytes(), 6 * 972);
        // ACKs still answer every arrival, duplicates included (002 Sec. 5.1).
        let mut acks = 0;
        while r.poll_transmit(Time::ZERO).is_some() {
            acks += 1;
        }
        assert_eq!(acks, 9);
    }

    #[test]
    fn the_simulator_default_counts_the_whole_packet() {
        let mut r = TfwcReceiver::new(&TfwcConfig::default());
        r.on_packet(Time::ZERO, &data(7, None));
        assert_eq!(r.delivered_bytes(), 1000);
    }
}
