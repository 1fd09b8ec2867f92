//! TCP data-segment and ACK headers: the structured form the simulator passes, and a byte form
//! for the real UDP transport.
//!
//! Sequence numbers count segments, as in ns-2's one-way TCP agents (`hdr_tcp::seqno_`), not bytes.
//! The ACK carries the next segment expected (RFC 793 style), which is ns-2's cumulative
//! `seqno` plus one, so that "nothing received yet" is 0 instead of ns-2's −1. SACK blocks are
//! `[left, right)` in segments, the right edge exclusive (RFC 2018 §3; ns-2 `Sacker::append_ack`
//! fills `sa_right` with the first missing segment above the block).
//!
//! Both headers are `Copy` with no heap. Decoding never panics: every length and field is checked
//! and a bad buffer gives a [`WireError`].

use crate::time::Time;

/// Maximum SACK blocks an ACK carries: ns-2's `NSA` limit for `hdr_tcp` and the
/// `Agent/TCPSink set maxSackBlocks_ 3` default; also what fits beside a timestamp option in 40
/// bytes of TCP options (RFC 2018 §3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// One SACK block: segments `left..right` have arrived (right edge exclusive).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    pub left: u64,
    pub right: u64,
}

/// A data segment's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpData {
    /// Segment number. With the SYN model on, segment 0 is the 40-byte SYN and data starts at 1.
    pub seq: u64,
    /// Send time, echoed by the receiver (RTT measurement when timestamps are on).
    pub ts: Time,
    /// Payload bytes carried (0 for the SYN); the receiver counts these as delivered.
    pub payload: u32,
    /// Set when this segment number was sent before (ns-2 counts it in `nrexmitpack_`).
    pub retransmit: bool,
}

/// Test fixture: the first transmission of segment `seq`, sent at `ts`, with 1000 B of payload
/// in a 1040 B packet (ns-2's `packetSize_` 1000 plus its 40 B of TCP/IP header).
#[cfg(test)]
pub(crate) fn test_segment(seq: u64, ts: Time) -> crate::Packet {
    crate::Packet {
        size: 1040,
        header: crate::Header::TcpData(TcpData {
            seq,
            ts,
            payload: 1000,
            retransmit: false,
        }),
    }
}

/// An acknowledgement's header.
///
/// SACK blocks are stored relative to `ack` (a signed 32-bit offset of the left edge and a
/// 32-bit length) so that the header, and with it every [`crate::Packet`], stays at 64 bytes
/// or less: the simulator copies packets through its pool on every hop. A real receiver's
/// blocks lie within a window of the ACK, far inside that range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpAck {
    /// Next segment expected: every segment below it has arrived.
    pub ack: u64,
    /// The timestamp echoed from a data segment (ns-2 `ts_echo`, chosen by `ts_echo_bugfix_`).
    pub ts_echo: Time,
    sack: [(i32, u32); MAX_SACK_BLOCKS],
    n_sack: u8,
}

/// The SACK blocks of one ACK, most recent first; derefs to a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    n: usize,
}

impl core::ops::Deref for SackBlocks {
    type Target = [SackBlock];
    fn deref(&self) -> &[SackBlock] {
        &self.blocks[..self.n]
    }
}

impl TcpAck {
    /// An ACK without SACK blocks.
    pub fn new(ack: u64, ts_echo: Time) -> TcpAck {
        TcpAck {
            ack,
            ts_echo,
            sack: [(0, 0); MAX_SACK_BLOCKS],
            n_sack: 0,
        }
    }

    /// Append a SACK block; returns `false` (and changes nothing) if the ACK already holds
    /// [`MAX_SACK_BLOCKS`], the block is empty, or it lies 2^31 segments or more from `ack`.
    pub fn push_sack(&mut self, b: SackBlock) -> bool {
        let n = self.n_sack as usize;
        if n >= MAX_SACK_BLOCKS || b.left >= b.right {
            return false;
        }
        let (Ok(off), Ok(len)) = (
            i32::try_from(i128::from(b.left) - i128::from(self.ack)),
            u32::try_from(b.right - b.left),
        ) else {
            return false;
        };
        self.sack[n] = (off, len);
        self.n_sack += 1;
        true
    }

    /// The SACK blocks, most recent first (RFC 2018 §4).
    pub fn sack_blocks(&self) -> SackBlocks {
        let mut blocks = [SackBlock::default(); MAX_SACK_BLOCKS];
        let n = self.n_sack as usize;
        for (b, &(off, len)) in blocks.iter_mut().zip(&self.sack[..n]) {
            // push_sack checked that both edges are representable.
            let left = (i128::from(self.ack) + i128::from(off)) as u64;
            *b = SackBlock {
                left,
                right: left + u64::from(len),
            };
        }
        SackBlocks { blocks, n }
    }
}

/// Why a buffer is not a valid header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The buffer ends before the header does.
    #[error("buffer too short: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    /// The first byte is not the expected header type.
    #[error("unexpected header type {0:#04x}")]
    WrongType(u8),
    /// An ACK claims more SACK blocks than the format allows.
    #[error("{0} SACK blocks, at most 3 allowed")]
    TooManySackBlocks(u8),
    /// A SACK block whose left edge is not below its right edge, or that lies 2^31 segments
    /// or more from the cumulative ACK.
    #[error("empty, inverted or out-of-range SACK block [{left}, {right})")]
    BadSackBlock { left: u64, right: u64 },
    /// Flag bits this version does not define.
    #[error("unknown flag bits {0:#04x}")]
    UnknownFlags(u8),
    /// The output buffer cannot hold the header.
    #[error("output buffer too small: need {need} bytes, have {have}")]
    NoRoom { need: usize, have: usize },
}

const TYPE_DATA: u8 = 0x54; // 'T'
const TYPE_ACK: u8 = 0x41; // 'A'
const FLAG_RETRANSMIT: u8 = 0x01;

impl TcpData {
    /// Encoded size: type, flags, payload (u32), seq (u64), ts (u64 ns), big-endian.
    pub const ENCODED_LEN: usize = 1 + 1 + 4 + 8 + 8;

    /// Write the header into `buf`; returns the bytes written. The payload itself follows it on
    /// the wire and is the transport's business.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let need = Self::ENCODED_LEN;
        if buf.len() < need {
            return Err(WireError::NoRoom {
                need,
                have: buf.len(),
            });
        }
        buf[0] = TYPE_DATA;
        buf[1] = if self.retransmit { FLAG_RETRANSMIT } else { 0 };
        buf[2..6].copy_from_slice(&self.payload.to_be_bytes());
        buf[6..14].copy_from_slice(&self.seq.to_be_bytes());
        buf[14..22].copy_from_slice(&self.ts.as_nanos().to_be_bytes());
        Ok(need)
    }

    /// Parse a header from the front of `buf`; returns it and the bytes consumed.
    pub fn decode(buf: &[u8]) -> Result<(TcpData, usize), WireError> {
        let need = Self::ENCODED_LEN;
        if buf.len() < need {
            return Err(WireError::Truncated {
                need,
                have: buf.len(),
            });
        }
        if buf[0] != TYPE_DATA {
            return Err(WireError::WrongType(buf[0]));
        }
        let flags = buf[1];
        if flags & !FLAG_RETRANSMIT != 0 {
            return Err(WireError::UnknownFlags(flags));
        }
        let hdr = TcpData {
            retransmit: flags & FLAG_RETRANSMIT != 0,
            payload: u32::from_be_bytes(read4(&buf[2..6])),
            seq: u64::from_be_bytes(read8(&buf[6..14])),
            ts: Time(u64::from_be_bytes(read8(&buf[14..22]))),
        };
        Ok((hdr, need))
    }
}

impl TcpAck {
    /// Encoded size without SACK blocks: type, block count, ack (u64), echo (u64 ns).
    pub const BASE_LEN: usize = 1 + 1 + 8 + 8;
    /// Bytes per encoded SACK block (two u64 edges).
    pub const BLOCK_LEN: usize = 16;

    /// Bytes [`TcpAck::encode`] writes for this ACK.
    pub fn encoded_len(&self) -> usize {
        Self::BASE_LEN + Self::BLOCK_LEN * self.n_sack as usize
    }

    /// Write the header into `buf`; returns the bytes written.
    pub fn encode(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let need = self.encoded_len();
        if buf.len() < need {
            return Err(WireError::NoRoom {
                need,
                have: buf.len(),
            });
        }
        buf[0] = TYPE_ACK;
        buf[1] = self.n_sack;
        buf[2..10].copy_from_slice(&self.ack.to_be_bytes());
        buf[10..18].copy_from_slice(&self.ts_echo.as_nanos().to_be_bytes());
        for (i, b) in self.sack_blocks().iter().enumerate() {
            let o = Self::BASE_LEN + i * Self::BLOCK_LEN;
            buf[o..o + 8].copy_from_slice(&b.left.to_be_bytes());
            buf[o + 8..o + 16].copy_from_slice(&b.right.to_be_bytes());
        }
        Ok(need)
    }

    /// Parse an ACK from the front of `buf`; returns it and the bytes consumed.
    pub fn decode(buf: &[u8]) -> Result<(TcpAck, usize), WireError> {
        if buf.len() < Self::BASE_LEN {
            return Err(WireError::Truncated {
                need: Self::BASE_LEN,
                have: buf.len(),
            });
        }
        if buf[0] != TYPE_ACK {
            return Err(WireError::WrongType(buf[0]));
        }
        let n = buf[1];
        if n as usize > MAX_SACK_BLOCKS {
            return Err(WireError::TooManySackBlocks(n));
        }
        let need = Self::BASE_LEN + Self::BLOCK_LEN * n as usize;
        if buf.len() < need {
            return Err(WireError::Truncated {
                need,
                have: buf.len(),
            });
        }
        let mut ack = TcpAck::new(
            u64::from_be_bytes(read8(&buf[2..10])),
            Time(u64::from_be_bytes(read8(&buf[10..18]))),
        );
        for i in 0..n as usize {
            let o = Self::BASE_LEN + i * Self::BLOCK_LEN;
            let left = u64::from_be_bytes(read8(&buf[o..o + 8]));
            let right = u64::from_be_bytes(read8(&buf[o + 8..o + 16]));
            if !ack.push_sack(SackBlock { left, right }) {
                return Err(WireError::BadSackBlock { left, right });
            }
        }
        Ok((ack, need))
    }
}

// Slices passed here are always of the stated length (checked by the callers' length tests), so
// the fallback never happens; it exists so that no path can panic.
fn read4(s: &[u8]) -> [u8; 4] {
    let mut a = [0u8; 4];
    if s.len() == 4 {
        a.copy_from_slice(s);
    }
    a
}
fn read8(s: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    if s.len() == 8 {
        a.copy_from_slice(s);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn data_header_round_trips() {
        let d = TcpData {
            seq: 123_456_789_012,
            ts: Time::from_millis(1500),
            payload: 1000,
            retransmit: true,
        };
        let mut buf = [0u8; 64];
        let n = d.encode(&mut buf).unwrap();
        assert_eq!(n, TcpData::ENCODED_LEN);
        assert_eq!(TcpData::decode(&buf[..n]).unwrap(), (d, n));
    }

    #[test]
    fn ack_with_three_blocks_round_trips_in_order() {
        let mut a = TcpAck::new(7, Time::from_micros(99));
        assert!(a.push_sack(SackBlock {
            left: 20,
            right: 22
        }));
        assert!(a.push_sack(SackBlock { left: 9, right: 12 }));
        assert!(a.push_sack(SackBlock {
            left: 14,
            right: 15
        }));
        assert!(
            !a.push_sack(SackBlock {
                left: 30,
                right: 31
            }),
            "a fourth block is refused"
        );
        let mut buf = [0u8; 128];
        let n = a.encode(&mut buf).unwrap();
        assert_eq!(n, 18 + 3 * 16);
        let (b, used) = TcpAck::decode(&buf).unwrap();
        assert_eq!((b, used), (a, n));
        assert_eq!(
            b.sack_blocks()[0],
            SackBlock {
                left: 20,
                right: 22
            }
        );
    }

    #[test]
    fn packets_stay_within_a_cache_line() {
        assert!(std::mem::size_of::<crate::Packet>() <= 64);
        let mut a = TcpAck::new(1 << 40, Time::ZERO);
        assert!(a.push_sack(SackBlock {
            left: (1 << 40) - 5,
            right: (1 << 40) - 2
        }));
        assert!(!a.push_sack(SackBlock {
            left: 1 << 62,
            right: (1 << 62) + 1
        }));
        assert_eq!(
            a.sack_blocks().to_vec(),
            vec![SackBlock {
                left: (1 << 40) - 5,
                right: (1 << 40) - 2
            }]
        );
    }

    #[test]
    fn malformed_acks_are_rejected_not_panicking() {
        let mut buf = [0u8; 18 + 16];
        TcpAck::new(1, Time::ZERO).encode(&mut buf).unwrap();
        buf[1] = 4;
        assert_eq!(TcpAck::decode(&buf), Err(WireError::TooManySackBlocks(4)));
        buf[1] = 1; // claims a block; left == right == 0
        assert_eq!(
            TcpAck::decode(&buf),
            Err(WireError::BadSackBlock { left: 0, right: 0 })
        );
        buf[1] = 2;
        assert!(matches!(
            TcpAck::decode(&buf),
            Err(WireError::Truncated { need: 50, .. })
        ));
        assert_eq!(TcpData::decode(&buf), Err(WireError::WrongType(TYPE_ACK)));
        assert!(matches!(
            TcpAck::new(1, Time::ZERO).encode(&mut [0u8; 5]),
            Err(WireError::NoRoom { .. })
        ));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = TcpData::decode(&bytes);
            let _ = TcpAck::decode(&bytes);
        }

        #[test]
        fn decoded_acks_reencode_identically(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok((a, n)) = TcpAck::decode(&bytes) {
                let mut out = [0u8; 80];
                prop_assert_eq!(a.encode(&mut out), Ok(n));
                prop_assert_eq!(&out[..n], &bytes[..n]);
            }
        }
    }
}
