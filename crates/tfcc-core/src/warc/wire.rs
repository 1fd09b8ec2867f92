//! The data and feedback headers of the receiver-driven rate schemes (WARC, TEAR, TFRCP) as
//! Rust values and as bytes.
//!
//! 003 gives no packet layout. What the schemes need: the data packet carries its sequence
//! number (loss detection), its send time (echoed for the RTT sample) and the sender's SRTT
//! and RTO (the receiver's rounds last one RTT and the fluid timeout needs `u = ⌈RTO/RTT⌉`,
//! Sec. 3.2.2.3); the feedback carries the rate for the next round in packets per RTT (Sec.
//! 3.2.1), the echoed send time and how long the receiver held it (RFC 5348 §6.2's `t_delay`).
//! Layout: a type word, then the fields in network byte order; times in nanoseconds, the rate
//! an IEEE-754 double. Decoding checks length, type and every value's domain and never panics
//! (property-tested below).
//!
//! The three schemes share the sender and this layout, so nothing in the packets would tell a
//! TEAR receiver from a WARC one: the type word's third byte names the scheme
//! ([`RateScheme`], WARC 0, so WARC's bytes are what they were before the others ran on
//! sockets). Two ends started with different schemes then fail on the first packet with
//! [`DecodeError::WrongScheme`] instead of running a flow that is neither.

use thiserror::Error;

use crate::time::{Dur, Time};

const MAGIC: u32 = 0x5752_0000; // "WR"
const TYPE_DATA: u32 = 1;
const TYPE_FEEDBACK: u32 = 2;

/// Which receiver-driven scheme a packet belongs to: the estimator at the receiver (the
/// sender is the same for all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RateScheme {
    Warc,
    Tear,
    Tfrcp,
}

impl RateScheme {
    /// Every scheme, in the order of their codes.
    pub const ALL: [RateScheme; 3] = [RateScheme::Warc, RateScheme::Tear, RateScheme::Tfrcp];

    /// The protocol name of scenarios and `tfcc send`/`recv`.
    pub fn name(self) -> &'static str {
        match self {
            RateScheme::Warc => "warc",
            RateScheme::Tear => "tear",
            RateScheme::Tfrcp => "tfrcp",
        }
    }

    /// The scheme of protocol `name`, if it is one.
    pub fn from_name(name: &str) -> Option<RateScheme> {
        RateScheme::ALL.into_iter().find(|s| s.name() == name)
    }

    fn code(self) -> u32 {
        self as u32
    }

    /// The type word this scheme's data headers start with: what tells a datagram's reader
    /// (tfcc-net's `wire::identify`) which scheme and header follow.
    pub fn data_word(self) -> u32 {
        type_word(self, TYPE_DATA)
    }

    /// The type word this scheme's reports start with.
    pub fn feedback_word(self) -> u32 {
        type_word(self, TYPE_FEEDBACK)
    }

    fn from_code(code: u32) -> Option<RateScheme> {
        RateScheme::ALL.into_iter().find(|s| s.code() == code)
    }
}

impl std::fmt::Display for RateScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Encoded size of a [`DataHeader`].
pub const DATA_LEN: usize = 4 + 8 + 8 + 8 + 8;
/// Encoded size of a [`FeedbackHeader`].
pub const FEEDBACK_LEN: usize = 4 + 8 + 8 + 8;

/// A data packet's header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    /// +1 per packet from 0.
    pub seq: u64,
    /// Send time, echoed in the feedback.
    pub sent_at: Time,
    /// The sender's SRTT, zero before the first sample.
    pub rtt: Dur,
    /// The sender's RTO (TCP's algorithm).
    pub rto: Dur,
}

/// A receiver report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackHeader {
    /// `sent_at` of the latest data packet received.
    pub echo: Time,
    /// Time between that packet's arrival and this report's departure.
    pub hold: Dur,
    /// The rate for the next round, packets per RTT (finite, ≥ 0).
    pub rate: f64,
}

/// Why bytes are not a header.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    #[error("truncated: {got} bytes, need {need}")]
    Truncated { got: usize, need: usize },
    #[error("wrong type word {0:#010x}")]
    WrongType(u32),
    #[error("rate is not a finite non-negative number")]
    BadRate,
    /// A header of the right type from another scheme's peer.
    #[error("a {got} packet where {expected} was expected")]
    WrongScheme {
        got: RateScheme,
        expected: RateScheme,
    },
}

fn word(buf: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&buf[at..at + 8]);
    u64::from_be_bytes(b)
}

fn type_word(scheme: RateScheme, ty: u32) -> u32 {
    MAGIC | scheme.code() << 8 | ty
}

fn check(buf: &[u8], need: usize, ty: u32, scheme: RateScheme) -> Result<(), DecodeError> {
    if buf.len() < need {
        return Err(DecodeError::Truncated {
            got: buf.len(),
            need,
        });
    }
    let t = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if t & 0xffff_00ff != MAGIC | ty {
        return Err(DecodeError::WrongType(t));
    }
    match RateScheme::from_code((t >> 8) & 0xff) {
        Some(s) if s == scheme => Ok(()),
        Some(got) => Err(DecodeError::WrongScheme {
            got,
            expected: scheme,
        }),
        None => Err(DecodeError::WrongType(t)),
    }
}

impl DataHeader {
    /// Writes the header of a WARC packet into `buf`; `None` if it is shorter than
    /// [`DATA_LEN`].
    pub fn encode(&self, buf: &mut [u8]) -> Option<usize> {
        self.encode_as(RateScheme::Warc, buf)
    }

    /// Writes the header of a `scheme` packet into `buf`; `None` if it is shorter than
    /// [`DATA_LEN`].
    pub fn encode_as(&self, scheme: RateScheme, buf: &mut [u8]) -> Option<usize> {
        let out = buf.get_mut(..DATA_LEN)?;
        out[..4].copy_from_slice(&type_word(scheme, TYPE_DATA).to_be_bytes());
        out[4..12].copy_from_slice(&self.seq.to_be_bytes());
        out[12..20].copy_from_slice(&self.sent_at.0.to_be_bytes());
        out[20..28].copy_from_slice(&self.rtt.0.to_be_bytes());
        out[28..36].copy_from_slice(&self.rto.0.to_be_bytes());
        Some(DATA_LEN)
    }

    /// A WARC packet's header.
    pub fn decode(buf: &[u8]) -> Result<DataHeader, DecodeError> {
        DataHeader::decode_as(RateScheme::Warc, buf)
    }

    /// A `scheme` packet's header.
    pub fn decode_as(scheme: RateScheme, buf: &[u8]) -> Result<DataHeader, DecodeError> {
        check(buf, DATA_LEN, TYPE_DATA, scheme)?;
        Ok(DataHeader {
            seq: word(buf, 4),
            sent_at: Time(word(buf, 12)),
            rtt: Dur(word(buf, 20)),
            rto: Dur(word(buf, 28)),
        })
    }
}

impl FeedbackHeader {
    /// Writes the header of a WARC report into `buf`; `None` if it is shorter than
    /// [`FEEDBACK_LEN`].
    pub fn encode(&self, buf: &mut [u8]) -> Option<usize> {
        self.encode_as(RateScheme::Warc, buf)
    }

    /// Writes the header of a `scheme` report into `buf`; `None` if it is shorter than
    /// [`FEEDBACK_LEN`].
    pub fn encode_as(&self, scheme: RateScheme, buf: &mut [u8]) -> Option<usize> {
        let out = buf.get_mut(..FEEDBACK_LEN)?;
        out[..4].copy_from_slice(&type_word(scheme, TYPE_FEEDBACK).to_be_bytes());
        out[4..12].copy_from_slice(&self.echo.0.to_be_bytes());
        out[12..20].copy_from_slice(&self.hold.0.to_be_bytes());
        out[20..28].copy_from_slice(&self.rate.to_bits().to_be_bytes());
        Some(FEEDBACK_LEN)
    }

    /// A WARC report's header.
    pub fn decode(buf: &[u8]) -> Result<FeedbackHeader, DecodeError> {
        FeedbackHeader::decode_as(RateScheme::Warc, buf)
    }

    /// A `scheme` report's header.
    pub fn decode_as(scheme: RateScheme, buf: &[u8]) -> Result<FeedbackHeader, DecodeError> {
        check(buf, FEEDBACK_LEN, TYPE_FEEDBACK, scheme)?;
        let rate = f64::from_bits(word(buf, 20));
        if !(rate.is_finite() && rate >= 0.0) {
            return Err(DecodeError::BadRate);
        }
        Ok(FeedbackHeader {
            echo: Time(word(buf, 4)),
            hold: Dur(word(buf, 12)),
            rate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn headers_round_trip() {
        let d = DataHeader {
            seq: 7,
            sent_at: Time::from_millis(3),
            rtt: Dur::from_millis(80),
            rto: Dur::from_millis(300),
        };
        let mut buf = [0u8; 64];
        assert_eq!(d.encode(&mut buf), Some(DATA_LEN));
        assert_eq!(DataHeader::decode(&buf), Ok(d));
        let f = FeedbackHeader {
            echo: Time::from_millis(3),
            hold: Dur::from_micros(5),
            rate: 12.5,
        };
        assert_eq!(f.encode(&mut buf), Some(FEEDBACK_LEN));
        assert_eq!(FeedbackHeader::decode(&buf), Ok(f));
        assert!(DataHeader::decode(&buf).is_err(), "type word checked");
        assert_eq!(d.encode(&mut buf[..10]), None);
    }

    #[test]
    fn a_bad_rate_is_refused() {
        let mut buf = [0u8; FEEDBACK_LEN];
        let f = FeedbackHeader {
            echo: Time::ZERO,
            hold: Dur::ZERO,
            rate: 1.0,
        };
        f.encode(&mut buf);
        buf[20..28].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        assert_eq!(FeedbackHeader::decode(&buf), Err(DecodeError::BadRate));
        buf[20..28].copy_from_slice(&(-1.0f64).to_bits().to_be_bytes());
        assert_eq!(FeedbackHeader::decode(&buf), Err(DecodeError::BadRate));
    }

    #[test]
    fn the_type_word_names_the_scheme_and_warcs_is_unchanged() {
        let d = DataHeader {
            seq: 1,
            sent_at: Time::from_millis(1),
            rtt: Dur::ZERO,
            rto: Dur::ZERO,
        };
        let mut buf = [0u8; DATA_LEN];
        d.encode(&mut buf);
        assert_eq!(buf[..4], [0x57, 0x52, 0x00, 0x01], "WARC's word as before");
        d.encode_as(RateScheme::Tfrcp, &mut buf);
        assert_eq!(buf[..4], [0x57, 0x52, 0x02, 0x01]);
        assert_eq!(DataHeader::decode_as(RateScheme::Tfrcp, &buf), Ok(d));
        assert_eq!(
            DataHeader::decode_as(RateScheme::Tear, &buf),
            Err(DecodeError::WrongScheme {
                got: RateScheme::Tfrcp,
                expected: RateScheme::Tear
            })
        );
        assert_eq!(
            DataHeader::decode_as(RateScheme::Tear, &buf)
                .unwrap_err()
                .to_string(),
            "a tfrcp packet where tear was expected"
        );
        buf[2] = 3; // no scheme
        assert_eq!(
            DataHeader::decode(&buf),
            Err(DecodeError::WrongType(0x5752_0301))
        );
        let f = FeedbackHeader {
            echo: Time::ZERO,
            hold: Dur::ZERO,
            rate: 2.0,
        };
        let mut fb = [0u8; FEEDBACK_LEN];
        f.encode_as(RateScheme::Tear, &mut fb);
        assert_eq!(FeedbackHeader::decode_as(RateScheme::Tear, &fb), Ok(f));
        assert!(matches!(
            FeedbackHeader::decode(&fb),
            Err(DecodeError::WrongScheme { .. })
        ));
        for s in RateScheme::ALL {
            assert_eq!(RateScheme::from_name(s.name()), Some(s));
        }
        assert_eq!(RateScheme::from_name("tfrc"), None);
    }

    proptest! {
        #[test]
        fn decoding_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = DataHeader::decode(&bytes);
            if let Ok(f) = FeedbackHeader::decode(&bytes) {
                prop_assert!(f.rate.is_finite() && f.rate >= 0.0);
            }
        }

        #[test]
        fn any_data_header_round_trips(seq: u64, a: u64, b: u64, c: u64) {
            let d = DataHeader { seq, sent_at: Time(a), rtt: Dur(b), rto: Dur(c) };
            let mut buf = [0u8; DATA_LEN];
            d.encode(&mut buf);
            prop_assert_eq!(DataHeader::decode(&buf), Ok(d));
        }
    }
}
