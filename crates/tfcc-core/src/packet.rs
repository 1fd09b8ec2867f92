//! The packet every endpoint emits and consumes.
//!
//! A [`Packet`] is a small `Copy` value, so the simulator can keep packets in a pool and move them
//! by index without heap allocation per packet (DESIGN.md, "Simulator"). The protocol-specific
//! part is the [`Header`] enum: one variant per message type, each defined in its protocol's own
//! module. Byte encodings for the real network live beside each header type and never panic on
//! bad input; the simulator passes the structured form and only charges `size` bytes of link time.

use crate::tcp::wire::{TcpAck, TcpData};
use crate::time::Time;

/// One datagram or segment as it crosses a link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet {
    /// Bytes on the wire, headers included: what a link charges serialisation time for and what a
    /// byte-limited queue counts.
    pub size: u32,
    pub header: Header,
}

/// The protocol message a packet carries.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Header {
    /// Payload without congestion control (CBR and on/off sources): a sequence number and the
    /// send time, enough for a receiver to count losses and delay.
    Raw { seq: u64, sent_at: Time },
    /// A TCP data segment (or the modelled SYN), [`crate::tcp`].
    TcpData(TcpData),
    /// A TCP acknowledgement with up to three SACK blocks inline, [`crate::tcp`].
    TcpAck(TcpAck),
    /// TFRC data packet (004 App. A).
    TfrcData(crate::tfrc::DataHeader),
    /// TFRC receiver report (004 App. A).
    TfrcFeedback(crate::tfrc::FeedbackHeader),
    /// TFWC data (002 Sec. 3.2): the sequence number, the send time the receiver echoes, and
    /// the sender's Ack of Ack.
    TfwcData {
        seq: u64,
        sent_at: Time,
        aoa: Option<u64>,
    },
    /// TFWC's per-packet ACK: the Ack Vector and the echoed send time (002 Sec. 3.2.1).
    TfwcAck {
        vector: crate::tfwc::AckVector,
        echo: Time,
    },
    /// Data of the receiver-driven rate schemes, WARC, TEAR and TFRCP (003), [`crate::warc`].
    WarcData(crate::warc::DataHeader),
    /// Their receiver's per-round rate report, [`crate::warc`].
    WarcFeedback(crate::warc::FeedbackHeader),
}

impl Packet {
    /// A raw (uncontrolled) datagram.
    pub fn raw(seq: u64, sent_at: Time, size: u32) -> Packet {
        Packet {
            size,
            header: Header::Raw { seq, sent_at },
        }
    }
}
