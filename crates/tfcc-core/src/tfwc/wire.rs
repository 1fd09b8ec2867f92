//! Byte encodings of TFWC's data header and Ack Vector for the real network.
//!
//! The thesis carries the Ack Vector in RTCP XR Loss RLE blocks (002 Sec. 5.1.2); their
//! run-length idea is DCCP's (RFC 4340 §11.4), which this form follows directly: each byte is a
//! 2-bit state (0 received, 3 not received) and a 6-bit run length minus one, running from the
//! head downward. All integers are big-endian. Decoding checks every length first and returns
//! an error; it never panics and never allocates more than the input justifies.
//!
//! ```text
//! data:  type=1 | flags (bit 0: AoA present) | reserved u16 | seq u64 | sent_at u64 (ns) | aoa u64
//! ack:   type=2 | reserved u8 | runs u16 | head u64 | echo u64 (ns) | runs × u8
//! ```

use thiserror::Error;

use super::ack_vector::{AckVector, Coverage};
use crate::time::Time;

/// Bytes of an encoded data header.
pub const DATA_LEN: usize = 28;
/// Bytes of an encoded ACK before its runs (one byte per run follows).
pub const ACK_FIXED_LEN: usize = 20;
/// The first byte of a data header, its type: the only thing that tells a datagram's reader
/// (tfcc-net's `wire::identify`) a TFWC packet from another protocol's.
pub const TYPE_DATA: u8 = 1;
/// The first byte of an ACK.
pub const TYPE_ACK: u8 = 2;
const STATE_RECEIVED: u8 = 0;
const STATE_NOT_RECEIVED: u8 = 3;
const MAX_RUN: u64 = 64;

/// Why bytes are not a TFWC header.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum WireError {
    #[error("TFWC packet too short: {got} bytes, need {need}")]
    Short { got: usize, need: usize },
    #[error("unknown TFWC packet type {0}")]
    Type(u8),
    #[error("Ack Vector run with reserved state {0}")]
    State(u8),
    #[error("Ack Vector runs reach below sequence number 0")]
    Underflow,
}

/// A TFWC data header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataHeader {
    pub seq: u64,
    pub sent_at: Time,
    /// The sender's Ack of Ack: everything at or below it has been judged.
    pub aoa: Option<u64>,
}

/// A decoded Ack Vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckHeader {
    pub head: u64,
    /// Send time of the data packet whose arrival triggered this ACK (for the RTT sample).
    pub echo: Time,
    /// `(received, length)` runs from the head downward.
    pub runs: Vec<(bool, u64)>,
}

/// Appends the [`DATA_LEN`]-byte header to `out` (the payload goes after it).
pub fn encode_data(h: &DataHeader, out: &mut Vec<u8>) {
    out.push(TYPE_DATA);
    out.push(u8::from(h.aoa.is_some()));
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&h.seq.to_be_bytes());
    out.extend_from_slice(&h.sent_at.as_nanos().to_be_bytes());
    out.extend_from_slice(&h.aoa.unwrap_or(0).to_be_bytes());
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(x)
}

fn need(b: &[u8], n: usize) -> Result<(), WireError> {
    if b.len() < n {
        Err(WireError::Short {
            got: b.len(),
            need: n,
        })
    } else {
        Ok(())
    }
}

/// Reads a data header from the front of `b` (trailing payload is ignored). The packet form
/// is [`crate::Header::TfwcData`] with the same three fields.
pub fn decode_data(b: &[u8]) -> Result<DataHeader, WireError> {
    need(b, 1)?;
    if b[0] != TYPE_DATA {
        return Err(WireError::Type(b[0]));
    }
    need(b, DATA_LEN)?;
    Ok(DataHeader {
        seq: u64_at(b, 4),
        sent_at: Time::from_nanos(u64_at(b, 12)),
        aoa: (b[1] & 1 == 1).then(|| u64_at(b, 20)),
    })
}

/// Encode the vector from its head down to just above `aoa` (everything, if `None`), within
/// the span the vector holds.
pub fn encode_ack(v: &AckVector, echo: Time, aoa: Option<u64>, out: &mut Vec<u8>) {
    let lowest = aoa.map_or(0, |a| a.saturating_add(1));
    let span = AckVector::SPAN.min(v.head.saturating_sub(lowest).saturating_add(1));
    let mut runs: Vec<u8> = Vec::new();
    let mut back = 0;
    while back < span {
        let received = v.coverage(v.head - back) == Coverage::Received;
        let mut len = 1;
        while back + len < span
            && len < MAX_RUN
            && (v.coverage(v.head - back - len) == Coverage::Received) == received
        {
            len += 1;
        }
        let state = if received {
            STATE_RECEIVED
        } else {
            STATE_NOT_RECEIVED
        };
        runs.push(state << 6 | (len - 1) as u8);
        back += len;
    }
    out.push(TYPE_ACK);
    out.push(0);
    out.extend_from_slice(&(runs.len() as u16).to_be_bytes());
    out.extend_from_slice(&v.head.to_be_bytes());
    out.extend_from_slice(&echo.as_nanos().to_be_bytes());
    out.extend_from_slice(&runs);
}

/// Reads an ACK from the front of `b`; [`AckHeader::to_vector`] and [`AckHeader::echo`] make
/// the [`crate::Header::TfwcAck`] a sender takes.
pub fn decode_ack(b: &[u8]) -> Result<AckHeader, WireError> {
    need(b, 1)?;
    if b[0] != TYPE_ACK {
        return Err(WireError::Type(b[0]));
    }
    need(b, ACK_FIXED_LEN)?;
    let n = u16::from_be_bytes([b[2], b[3]]) as usize;
    need(b, ACK_FIXED_LEN + n)?;
    let head = u64_at(b, 4);
    let mut runs = Vec::with_capacity(n);
    let mut covered: u64 = 0;
    for &byte in &b[ACK_FIXED_LEN..ACK_FIXED_LEN + n] {
        let received = match byte >> 6 {
            STATE_RECEIVED => true,
            STATE_NOT_RECEIVED => false,
            s => return Err(WireError::State(s)),
        };
        let len = u64::from(byte & 0x3f) + 1;
        covered += len;
        if covered > head.saturating_add(1) {
            return Err(WireError::Underflow);
        }
        runs.push((received, len));
    }
    Ok(AckHeader {
        head,
        echo: Time::from_nanos(u64_at(b, 12)),
        runs,
    })
}

impl AckHeader {
    /// The simulator form: the newest [`AckVector::SPAN`] states.
    pub fn to_vector(&self) -> AckVector {
        let mut v = AckVector {
            head: self.head,
            bits: 0,
        };
        let mut back = 0u64;
        for &(received, len) in &self.runs {
            if received {
                for i in back..(back + len).min(AckVector::SPAN) {
                    v.bits |= 1 << i;
                }
            }
            back += len;
            if back >= AckVector::SPAN {
                break;
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_thesis_example_survives_the_wire() {
        let mut v = AckVector::starting_at(10);
        for s in [11, 13, 14, 15, 16, 18, 19, 20] {
            v.record(s);
        }
        let mut b = Vec::new();
        encode_ack(&v, Time::from_millis(7), Some(9), &mut b);
        let h = decode_ack(&b).unwrap();
        // 20 19 18 | 17 | 16 15 14 13 | 12 | 11 10: five runs, 11 numbers (002: "11 bits").
        assert_eq!(
            h.runs,
            vec![(true, 3), (false, 1), (true, 4), (false, 1), (true, 2)]
        );
        assert_eq!(h.runs.iter().map(|r| r.1).sum::<u64>(), 11);
        assert_eq!(h.to_vector(), v);
        assert_eq!(h.echo, Time::from_millis(7));
    }

    #[test]
    fn short_and_foreign_input_is_rejected() {
        assert_eq!(
            decode_data(&[1, 0, 0]),
            Err(WireError::Short { got: 3, need: 28 })
        );
        assert_eq!(decode_ack(&[1; 40]), Err(WireError::Type(1)));
        let mut b = Vec::new();
        encode_ack(&AckVector::starting_at(2), Time::ZERO, None, &mut b);
        b[20] = 3 << 6 | 5; // 6 not-received below head 2
        assert_eq!(decode_ack(&b), Err(WireError::Underflow));
        b[20] = 1 << 6;
        assert_eq!(decode_ack(&b), Err(WireError::State(1)));
    }

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(b in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_data(&b);
            let _ = decode_ack(&b);
        }

        #[test]
        fn data_headers_round_trip(seq: u64, t: u64, aoa: Option<u64>) {
            let h = DataHeader { seq, sent_at: Time::from_nanos(t), aoa };
            let mut b = Vec::new();
            encode_data(&h, &mut b);
            prop_assert_eq!(b.len(), DATA_LEN);
            prop_assert_eq!(decode_data(&b).unwrap(), h);
        }

        #[test]
        fn ack_vectors_round_trip(head in 100u64..1_000_000, bits: u64) {
            let v = AckVector { head, bits: bits | 1 };
            let mut b = Vec::new();
            encode_ack(&v, Time::ZERO, None, &mut b);
            prop_assert_eq!(decode_ack(&b).unwrap().to_vector(), v);
        }
    }
}
