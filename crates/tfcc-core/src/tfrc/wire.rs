//! TFRC's data and feedback headers (004 App. A) as Rust values and as bytes.
//!
//! The thesis lists the fields but its Figure A.1 (the layout) is lost (spec 004 §2.15), so the
//! order here is the order the prose lists them, after a leading type/version word as the spec
//! suggests, in network byte order. Departures from App. A, each for a stated reason:
//!
//! - sequence numbers and times are 64 bits, times in nanoseconds, not 32-bit milliseconds: the
//!   simulator's clock is in nanoseconds and a LAN RTT is below a millisecond; 64-bit sequence
//!   numbers never wrap, so the receiver needs no unwrapping;
//! - the data header carries two RTTs, the sender's smoothed RTT and its latest sample, where
//!   App. A has one field ("the sender's RTT estimate", which the receiver needs for the model
//!   and for grouping loss events): the model's `t_RTO` is a multiple of the smoothed RTT
//!   (Sec. 3.3) and Sec. 3.4 groups losses with "the current RTT [...] and not the smoothed
//!   RTT" (spec 004 §2.5 \[Gap\]: carry both). Every preset sends both; only the thesis preset
//!   groups with the sample ([`super::config::LossEventRtt`]);
//! - rates are bytes/s in 32 bits, not KByte/s: 1 KB/s granularity is 5 % of the thesis' own
//!   20 KB/s result at 10 % loss (Sec. 4.3.2). 32 bits reach 34 Gbit/s and saturate above;
//! - the feedback carries the loss event rate `p` (an IEEE-754 double) and the receiver's
//!   holding delay instead of the expected rate `b_exp`: the sender evaluates the equation
//!   (RFC 5348 §6, ns-2), see [`super`] for why that gives the thesis' `b_exp`. The holding
//!   delay is 004 Sec. 3.3 footnote 1's second option ("report the delay");
//! - the word after the rate carries the mode code in its low byte and, in the upper three
//!   bytes, the sender's round (its count of reports taken and no-feedback expiries, modulo
//!   2^24): ns-2.35's `round_id`, which its receiver needs to group losses the way
//!   `PreciseLoss_ 1` does ([`super::config::TfrcConfig::loss_event_round`]). Packing it into
//!   the mode word keeps the header at 44 bytes, which packet sizes and the video payload
//!   layout depend on.
//!
//! Decoding checks the length, the type word and every value's domain and returns an error;
//! it never panics on any input (property-tested below).

use thiserror::Error;

use crate::time::{Dur, Time};

/// The sender's protocol mode, carried in every data header (004 App. B; codes as App. A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// No RTT sample yet: probing at a very low rate (code 0).
    #[default]
    InitRtt,
    /// Doubling per RTT until the first loss report (code 1).
    Slowstart,
    /// Following the equation (code 2).
    CongestionControl,
    /// After a send error: like congestion control, but no return to slowstart until a report
    /// shows loss (004 Sec. 3.6.3; code 4).
    Forced,
}

impl Mode {
    /// The App. B code.
    pub fn code(self) -> u32 {
        match self {
            Mode::InitRtt => 0,
            Mode::Slowstart => 1,
            Mode::CongestionControl => 2,
            Mode::Forced => 4,
        }
    }

    /// The mode for an App. B code (3 is unused).
    pub fn from_code(c: u32) -> Option<Mode> {
        Some(match c {
            0 => Mode::InitRtt,
            1 => Mode::Slowstart,
            2 => Mode::CongestionControl,
            4 => Mode::Forced,
            _ => return None,
        })
    }

    /// A name for logs and plots ([`crate::Stats::mode`]).
    pub fn name(self) -> &'static str {
        match self {
            Mode::InitRtt => "init-rtt",
            Mode::Slowstart => "slowstart",
            Mode::CongestionControl => "congestion-control",
            Mode::Forced => "forced-congestion-control",
        }
    }
}

/// The data packet header (004 App. A).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DataHeader {
    /// +1 per packet, from 0.
    pub seq: u64,
    /// Send time, echoed back for the RTT sample (004 Eq. 3.1).
    pub timestamp: Time,
    /// The sender's smoothed RTT (zero before the first sample): the receiver times its
    /// feedback by it, seeds the history at it (004 Sec. 3.6.2) and, under
    /// [`super::config::LossEventRtt::Smoothed`] (`ns2`, `rfc5348`; RFC 5348 §5.2), groups
    /// losses into events with it.
    pub rtt: Dur,
    /// The sender's latest RTT sample, 004's `t_RTT_cur` (Eq. 3.1; zero before the first
    /// sample), which the receiver groups losses with under
    /// [`super::config::LossEventRtt::Sample`] (the thesis preset, 004 Sec. 3.4). Nanoseconds
    /// in 64 bits like every time here; any value decodes.
    pub rtt_sample: Dur,
    /// The sender's current rate in bytes/s: "for monitoring" in App. A; the receiver also
    /// seeds the history from it (004 Sec. 3.6.2, `b_sst/2`).
    pub rate: u32,
    pub mode: Mode,
    /// The sender's round, modulo 2^24: reports taken plus no-feedback expiries (ns-2.35's
    /// `round_id`). Only the receiver's loss-event grouping under
    /// [`super::config::TfrcConfig::loss_event_round`] reads it.
    pub round: u32,
}

/// The largest [`DataHeader::round`] the header holds; larger values are taken modulo 2^24.
pub const ROUND_MAX: u32 = 0x00FF_FFFF;

/// The receiver report (004 App. A), RFC 5348 §6's feedback packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackHeader {
    /// Sequence number of the last data packet received.
    pub seq_echo: u64,
    /// Its timestamp.
    pub timestamp_echo: Time,
    /// Time between that packet's arrival and this report (004 Sec. 3.3 footnote 1,
    /// RFC 5348 §6.2 `t_delay`).
    pub t_delay: Dur,
    /// Receive rate `X_recv` (004 `b_rep`) in bytes/s over the last RTT.
    pub x_recv: u32,
    /// Loss event rate; 0 means "no loss yet" (spec 004 §2.17 \[Gap\]), so the sender stays in
    /// slowstart.
    pub p: f64,
}

/// Bytes of an encoded data header.
pub const DATA_LEN: usize = 44;
/// Bytes of an encoded feedback header.
pub const FEEDBACK_LEN: usize = 40;

/// "TF", version 3, type in the low byte. Version 2 added the data header's `rtt_sample` (36 to
/// 44 bytes), version 3 the sender's round in the mode word's upper bytes (zero in version 2);
/// an older peer's headers fail to decode as [`DecodeError::WrongType`] rather than being
/// misread.
const MAGIC: u32 = 0x5446_0300;
const TYPE_DATA: u32 = 1;
const TYPE_FEEDBACK: u32 = 2;
/// The type word a data header starts with: what tells a datagram's reader (tfcc-net's
/// `wire::identify`) that a TFRC data header follows.
pub const DATA_WORD: u32 = MAGIC | TYPE_DATA;
/// The type word a feedback header starts with.
pub const FEEDBACK_WORD: u32 = MAGIC | TYPE_FEEDBACK;

/// Why bytes are not a TFRC header.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the header needs.
    #[error("tfrc header truncated: need {need} bytes, got {got}")]
    Truncated { need: usize, got: usize },
    /// The type/version word is not the one expected.
    #[error("not a tfrc {expected} header (type word {word:#010x})")]
    WrongType { expected: &'static str, word: u32 },
    /// A mode code outside 0, 1, 2, 4.
    #[error("tfrc data header: unknown mode code {0}")]
    BadMode(u32),
    /// A loss event rate that is not a number in [0, 1].
    #[error("tfrc feedback header: loss event rate out of [0, 1]")]
    BadLossRate,
}

struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    /// A writer over `buf[..len]` with the type word of `kind` written; `None` if `buf` is
    /// shorter than `len`.
    fn start(buf: &'a mut [u8], len: usize, kind: u32) -> Option<Self> {
        if buf.len() < len {
            return None;
        }
        let mut w = Writer { buf, at: 0 };
        w.put(&(MAGIC | kind).to_be_bytes());
        Some(w)
    }

    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader past the type word of a `len`-byte header of `kind` (named `expected` in the
    /// error) at the front of `buf`: an error if `buf` is shorter or the word is another.
    fn start(
        buf: &'a [u8],
        len: usize,
        kind: u32,
        expected: &'static str,
    ) -> Result<Self, DecodeError> {
        check_len(buf, len)?;
        let mut r = Reader { buf, at: 0 };
        let word = r.u32();
        if word != MAGIC | kind {
            return Err(DecodeError::WrongType { expected, word });
        }
        Ok(r)
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        // Callers check the total length first, so this slice is in bounds; `get` keeps the
        // promise that nothing here panics even if that check were wrong.
        if let Some(s) = self.buf.get(self.at..self.at + N) {
            out.copy_from_slice(s);
        }
        self.at += N;
        out
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.take())
    }
}

fn check_len(buf: &[u8], need: usize) -> Result<(), DecodeError> {
    if buf.len() < need {
        Err(DecodeError::Truncated {
            need,
            got: buf.len(),
        })
    } else {
        Ok(())
    }
}

impl DataHeader {
    /// Writes the header into `buf[..DATA_LEN]`; `None` if `buf` is shorter.
    pub fn encode(&self, buf: &mut [u8]) -> Option<usize> {
        let mut w = Writer::start(buf, DATA_LEN, TYPE_DATA)?;
        w.put(&self.seq.to_be_bytes());
        w.put(&self.timestamp.0.to_be_bytes());
        w.put(&self.rtt.0.to_be_bytes());
        w.put(&self.rtt_sample.0.to_be_bytes());
        w.put(&self.rate.to_be_bytes());
        w.put(&(((self.round & ROUND_MAX) << 8) | self.mode.code()).to_be_bytes());
        Some(DATA_LEN)
    }

    /// Reads a header from the front of `buf` (trailing payload is ignored).
    pub fn decode(buf: &[u8]) -> Result<DataHeader, DecodeError> {
        let mut r = Reader::start(buf, DATA_LEN, TYPE_DATA, "data")?;
        let seq = r.u64();
        let timestamp = Time(r.u64());
        let rtt = Dur(r.u64());
        let rtt_sample = Dur(r.u64());
        let rate = r.u32();
        let word = r.u32();
        let code = word & 0xFF;
        let mode = Mode::from_code(code).ok_or(DecodeError::BadMode(code))?;
        Ok(DataHeader {
            seq,
            timestamp,
            rtt,
            rtt_sample,
            rate,
            mode,
            round: word >> 8,
        })
    }
}

impl FeedbackHeader {
    /// Writes the header into `buf[..FEEDBACK_LEN]`; `None` if `buf` is shorter.
    pub fn encode(&self, buf: &mut [u8]) -> Option<usize> {
        let mut w = Writer::start(buf, FEEDBACK_LEN, TYPE_FEEDBACK)?;
        w.put(&self.seq_echo.to_be_bytes());
        w.put(&self.timestamp_echo.0.to_be_bytes());
        w.put(&self.t_delay.0.to_be_bytes());
        w.put(&self.x_recv.to_be_bytes());
        w.put(&self.p.to_bits().to_be_bytes());
        Some(FEEDBACK_LEN)
    }

    /// Reads a header from the front of `buf`.
    pub fn decode(buf: &[u8]) -> Result<FeedbackHeader, DecodeError> {
        let mut r = Reader::start(buf, FEEDBACK_LEN, TYPE_FEEDBACK, "feedback")?;
        let seq_echo = r.u64();
        let timestamp_echo = Time(r.u64());
        let t_delay = Dur(r.u64());
        let x_recv = r.u32();
        let p = f64::from_bits(r.u64());
        if !(0.0..=1.0).contains(&p) {
            return Err(DecodeError::BadLossRate);
        }
        Ok(FeedbackHeader {
            seq_echo,
            timestamp_echo,
            t_delay,
            x_recv,
            p,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn mode() -> impl Strategy<Value = Mode> {
        prop_oneof![
            Just(Mode::InitRtt),
            Just(Mode::Slowstart),
            Just(Mode::CongestionControl),
            Just(Mode::Forced)
        ]
    }

    #[test]
    fn data_header_layout_is_fixed_and_big_endian() {
        let h = DataHeader {
            seq: 0x0102,
            timestamp: Time(3),
            rtt: Dur(4),
            rtt_sample: Dur(6),
            rate: 5,
            mode: Mode::Forced,
            round: 0x0A_0B0C,
        };
        let mut b = [0u8; DATA_LEN];
        assert_eq!(h.encode(&mut b), Some(DATA_LEN));
        assert_eq!(&b[..4], &[0x54, 0x46, 0x03, 0x01]);
        assert_eq!(&b[4..12], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(b[19], 3);
        assert_eq!(b[27], 4);
        assert_eq!(b[35], 6);
        assert_eq!(b[39], 5);
        assert_eq!(&b[40..44], &[0x0A, 0x0B, 0x0C, 4]);
        assert_eq!(h.encode(&mut [0u8; DATA_LEN - 1]), None);
        // A round beyond 24 bits is sent modulo 2^24.
        DataHeader {
            round: 0x0100_0002,
            ..h
        }
        .encode(&mut b)
        .unwrap();
        assert_eq!(DataHeader::decode(&b).map(|d| d.round), Ok(2));
    }

    #[test]
    fn errors_name_what_is_wrong() {
        // Long enough for a data header, so that decoding it as one fails on the type word.
        let mut b = [0u8; DATA_LEN];
        let f = FeedbackHeader {
            seq_echo: 1,
            timestamp_echo: Time(2),
            t_delay: Dur(3),
            x_recv: 4,
            p: 0.5,
        };
        f.encode(&mut b).unwrap();
        assert!(matches!(
            DataHeader::decode(&b),
            Err(DecodeError::WrongType { .. })
        ));
        assert_eq!(
            FeedbackHeader::decode(&b[..10]),
            Err(DecodeError::Truncated { need: 40, got: 10 })
        );
        b[32..40].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        assert_eq!(FeedbackHeader::decode(&b), Err(DecodeError::BadLossRate));
        let mut d = [0u8; DATA_LEN];
        DataHeader {
            seq: 0,
            timestamp: Time(0),
            rtt: Dur(0),
            rtt_sample: Dur(0),
            rate: 0,
            mode: Mode::InitRtt,
            round: 0,
        }
        .encode(&mut d)
        .unwrap();
        d[43] = 3;
        assert_eq!(DataHeader::decode(&d), Err(DecodeError::BadMode(3)));
        assert_eq!(
            DataHeader::decode(&d[..DATA_LEN - 1]),
            Err(DecodeError::Truncated { need: 44, got: 43 })
        );
        // Version-1 (36 bytes, no `rtt_sample`) and version-2 (no round) data headers are
        // refused, not misread.
        for word in [0x5446_0101u32, 0x5446_0201] {
            let mut old = [0u8; DATA_LEN];
            old[..4].copy_from_slice(&word.to_be_bytes());
            assert!(matches!(
                DataHeader::decode(&old),
                Err(DecodeError::WrongType { expected: "data", word: w }) if w == word
            ));
        }
    }

    proptest! {
        #[test]
        fn data_round_trips(seq: u64, ts: u64, rtt: u64, sample: u64, rate: u32, mode in mode(), round in 0..=ROUND_MAX) {
            let h = DataHeader { seq, timestamp: Time(ts), rtt: Dur(rtt), rtt_sample: Dur(sample), rate, mode, round };
            let mut b = [0u8; DATA_LEN + 8];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(DataHeader::decode(&b), Ok(h));
        }

        #[test]
        fn feedback_round_trips(seq: u64, ts: u64, d: u64, x: u32, p in 0.0f64..=1.0) {
            let h = FeedbackHeader { seq_echo: seq, timestamp_echo: Time(ts), t_delay: Dur(d), x_recv: x, p };
            let mut b = [0u8; FEEDBACK_LEN];
            h.encode(&mut b).unwrap();
            prop_assert_eq!(FeedbackHeader::decode(&b), Ok(h));
        }

        #[test]
        fn decoding_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = DataHeader::decode(&bytes);
            if let Ok(f) = FeedbackHeader::decode(&bytes) {
                prop_assert!((0.0..=1.0).contains(&f.p));
            }
        }

        #[test]
        fn random_bytes_after_a_valid_type_word_never_panic(
            kind in 1u32..=2,
            rest in proptest::collection::vec(any::<u8>(), 0..48),
        ) {
            let mut bytes = (MAGIC | kind).to_be_bytes().to_vec();
            bytes.extend(rest);
            let _ = DataHeader::decode(&bytes);
            let _ = FeedbackHeader::decode(&bytes);
        }
    }
}
