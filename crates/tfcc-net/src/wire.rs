//! Datagrams: a protocol header at the front (the protocol's own wire format from tfcc-core),
//! then application payload (or zeros) up to the packet's size.
//!
//! A [`Packet`]'s `size` is the UDP payload length: the datagram carries exactly the bytes the
//! endpoint accounts for (TFRC's `s`, a CBR packet's size), so rates computed by the protocol
//! and rates measured on the socket agree; IP and UDP headers (28 B over IPv4) come on top, as
//! they do for the competing TCP's segments. A packet smaller than its header is sent as the
//! bare header. Decoding checks the length and the type word and never panics (property-tested
//! below); what does not decode is counted by the session and dropped.

use std::cell::RefCell;

use tfcc_core::tfrc::wire as tfrc;
use tfcc_core::tfwc::wire as tfwc;
use tfcc_core::warc::wire as warc;
use tfcc_core::{Header, Packet, Time};
use thiserror::Error;

/// Which protocol's headers a session speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Uncontrolled sequence-numbered datagrams ([`Header::Raw`]: CBR sources).
    Raw,
    /// TFRC (004 App. A headers, [`tfcc_core::tfrc::wire`]).
    Tfrc,
    /// TFWC (002: data with Ack of Ack, per-packet Ack Vector, [`tfcc_core::tfwc::wire`]).
    Tfwc,
    /// A receiver-driven rate scheme of 003, WARC, TEAR or TFRCP: paced data carrying the
    /// sender's SRTT and RTO, the receiver's rate report once per RTT
    /// ([`tfcc_core::warc::wire`]); the scheme is in every header, so ends that run different
    /// ones refuse each other's packets ([`warc::DecodeError::WrongScheme`]).
    Rate(warc::RateScheme),
}

impl Protocol {
    /// The protocol's name as scenarios and `tfcc send`/`recv` spell it (a rate scheme's own
    /// name), except `raw` for the header CBR and on/off sources send.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Raw => "raw",
            Protocol::Tfrc => "tfrc",
            Protocol::Tfwc => "tfwc",
            Protocol::Rate(s) => s.name(),
        }
    }
}

/// The two directions of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Sender to receiver.
    Data,
    /// Receiver to sender (reports, ACKs).
    Feedback,
}

/// Raw header: type word, seq u64, sent_at u64 (ns), big-endian.
pub const RAW_LEN: usize = 20;

/// The largest UDP payload over IPv4 (65 535 − 20 B IP header − 8 B UDP header): no datagram,
/// header and payload, may be larger (`tfcc send --packet-size`, the Python classes'
/// `packet_size`).
pub const MAX_UDP_PAYLOAD: u32 = 65_507;

/// "TF", version 1, type 0x10: beside TFRC's types 1 and 2 under the same "TF" (TFRC's
/// headers are at version 3, `0x5446_0301`/`0x5446_0302`; the raw header never changed).
const RAW_WORD: u32 = 0x5446_0110;

/// Why a datagram was not accepted.
#[derive(Clone, Copy, Debug, Error, PartialEq, Eq)]
pub enum WireError {
    /// Not a header of the session's protocol and direction.
    #[error(transparent)]
    Tfrc(#[from] tfrc::DecodeError),
    /// Not a TFWC header of the session's direction.
    #[error(transparent)]
    Tfwc(#[from] tfwc::WireError),
    /// Not a header of the session's rate scheme and direction.
    #[error(transparent)]
    Warc(#[from] warc::DecodeError),
    /// A raw header too short or with the wrong type word.
    #[error("not a raw datagram header")]
    Raw,
    /// The packet's header belongs to another protocol than the session's (a bug in the caller,
    /// reported rather than sent).
    #[error("packet header does not match the session protocol")]
    Mismatch,
}

/// The application's payload writer: given the bytes after the header.
pub type PayloadFill<'a> = dyn FnMut(&mut [u8]) + 'a;

/// Writes `pkt` into `buf`: the header, then `fill` is given the payload region (or it is
/// zeroed when `fill` is `None`). Returns the datagram length, at most `buf.len()`.
pub fn encode(
    proto: Protocol,
    pkt: &Packet,
    buf: &mut [u8],
    fill: Option<&mut PayloadFill<'_>>,
) -> Result<usize, WireError> {
    let hdr = match (proto, pkt.header) {
        (Protocol::Raw, Header::Raw { seq, sent_at }) if buf.len() >= RAW_LEN => {
            buf[..4].copy_from_slice(&RAW_WORD.to_be_bytes());
            buf[4..12].copy_from_slice(&seq.to_be_bytes());
            buf[12..20].copy_from_slice(&sent_at.0.to_be_bytes());
            RAW_LEN
        }
        (Protocol::Tfrc, Header::TfrcData(h)) => h.encode(buf).ok_or(WireError::Mismatch)?,
        (Protocol::Tfrc, Header::TfrcFeedback(f)) => f.encode(buf).ok_or(WireError::Mismatch)?,
        (Protocol::Tfwc, Header::TfwcData { seq, sent_at, aoa }) => {
            let h = tfwc::DataHeader { seq, sent_at, aoa };
            with_scratch(buf, |v| tfwc::encode_data(&h, v))?
        }
        // The whole span the vector holds: the ACK does not know the sender's Ack of Ack.
        (Protocol::Tfwc, Header::TfwcAck { vector, echo }) => {
            with_scratch(buf, |v| tfwc::encode_ack(&vector, echo, None, v))?
        }
        (Protocol::Rate(s), Header::WarcData(h)) => {
            h.encode_as(s, buf).ok_or(WireError::Mismatch)?
        }
        (Protocol::Rate(s), Header::WarcFeedback(f)) => {
            f.encode_as(s, buf).ok_or(WireError::Mismatch)?
        }
        _ => return Err(WireError::Mismatch),
    };
    let len = (pkt.size as usize).clamp(hdr, buf.len());
    let payload = &mut buf[hdr..len];
    match fill {
        Some(f) => f(payload),
        None => payload.fill(0),
    }
    Ok(len)
}

thread_local! {
    /// tfcc-core's TFWC encoders append to a `Vec`; one per thread, reused, keeps the send path
    /// free of allocation once it has grown to the largest header (an ACK of 64 runs).
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(256));
}

/// Runs a `Vec` encoder into the thread's scratch buffer and copies the header into `buf`.
fn with_scratch(buf: &mut [u8], f: impl FnOnce(&mut Vec<u8>)) -> Result<usize, WireError> {
    SCRATCH.with(|s| {
        let mut v = s.borrow_mut();
        v.clear();
        f(&mut v);
        let n = v.len();
        let dst = buf.get_mut(..n).ok_or(WireError::Mismatch)?;
        dst.copy_from_slice(&v);
        Ok(n)
    })
}

/// The sequence number of a data header of any tfcc protocol; `None` for feedback (and for
/// TCP's headers, which the transport never carries).
pub fn data_seq(h: &Header) -> Option<u64> {
    match h {
        Header::Raw { seq, .. } | Header::TfwcData { seq, .. } => Some(*seq),
        Header::TfrcData(d) => Some(d.seq),
        Header::WarcData(d) => Some(d.seq),
        _ => None,
    }
}

/// The header at the front of a datagram of `proto` travelling in `dir`, and the header length
/// (the payload follows it).
pub fn decode(proto: Protocol, dir: Direction, buf: &[u8]) -> Result<(Header, usize), WireError> {
    Ok(match (proto, dir) {
        (Protocol::Raw, Direction::Data) => {
            if buf.len() < RAW_LEN || buf[..4] != RAW_WORD.to_be_bytes() {
                return Err(WireError::Raw);
            }
            let mut seq = [0u8; 8];
            let mut at = [0u8; 8];
            seq.copy_from_slice(&buf[4..12]);
            at.copy_from_slice(&buf[12..20]);
            (
                Header::Raw {
                    seq: u64::from_be_bytes(seq),
                    sent_at: Time(u64::from_be_bytes(at)),
                },
                RAW_LEN,
            )
        }
        // Raw flows have no feedback: anything arriving at a raw sender is unexpected.
        (Protocol::Raw, Direction::Feedback) => return Err(WireError::Raw),
        (Protocol::Tfrc, Direction::Data) => (
            Header::TfrcData(tfrc::DataHeader::decode(buf)?),
            tfrc::DATA_LEN,
        ),
        (Protocol::Tfrc, Direction::Feedback) => (
            Header::TfrcFeedback(tfrc::FeedbackHeader::decode(buf)?),
            tfrc::FEEDBACK_LEN,
        ),
        (Protocol::Tfwc, Direction::Data) => {
            let h = tfwc::decode_data(buf)?;
            (
                Header::TfwcData {
                    seq: h.seq,
                    sent_at: h.sent_at,
                    aoa: h.aoa,
                },
                tfwc::DATA_LEN,
            )
        }
        (Protocol::Tfwc, Direction::Feedback) => {
            let h = tfwc::decode_ack(buf)?;
            // decode_ack has checked that the run bytes are there.
            let len = tfwc::ACK_FIXED_LEN + usize::from(u16::from_be_bytes([buf[2], buf[3]]));
            (
                Header::TfwcAck {
                    vector: h.to_vector(),
                    echo: h.echo,
                },
                len,
            )
        }
        (Protocol::Rate(s), Direction::Data) => (
            Header::WarcData(warc::DataHeader::decode_as(s, buf)?),
            warc::DATA_LEN,
        ),
        (Protocol::Rate(s), Direction::Feedback) => (
            Header::WarcFeedback(warc::FeedbackHeader::decode_as(s, buf)?),
            warc::FEEDBACK_LEN,
        ),
    })
}

/// The protocol and direction a datagram's leading type word names, for a reader that does not
/// know the flow (a capture, a dissector's cross-check); `None` if it names none of them. Only
/// the type is looked at: [`decode`] with the answer checks the rest. The words are each
/// protocol's own, so at most one `(protocol, direction)` decodes any datagram, and it is this
/// one (property-tested below). TFWC's headers start with a type byte alone (1 or 2), which no
/// other type word here starts with ("TF" and "WR" are 0x54 and 0x57).
pub fn identify(buf: &[u8]) -> Option<(Protocol, Direction)> {
    match buf.first() {
        Some(&tfwc::TYPE_DATA) => return Some((Protocol::Tfwc, Direction::Data)),
        Some(&tfwc::TYPE_ACK) => return Some((Protocol::Tfwc, Direction::Feedback)),
        _ => {}
    }
    let word = u32::from_be_bytes(buf.get(..4)?.try_into().ok()?);
    match word {
        RAW_WORD => Some((Protocol::Raw, Direction::Data)),
        tfrc::DATA_WORD => Some((Protocol::Tfrc, Direction::Data)),
        tfrc::FEEDBACK_WORD => Some((Protocol::Tfrc, Direction::Feedback)),
        _ => warc::RateScheme::ALL.into_iter().find_map(|s| {
            let dir = if word == s.data_word() {
                Direction::Data
            } else if word == s.feedback_word() {
                Direction::Feedback
            } else {
                return None;
            };
            Some((Protocol::Rate(s), dir))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tfcc_core::tfrc::{DataHeader, FeedbackHeader, Mode};
    use tfcc_core::Dur;

    #[test]
    fn a_tfrc_data_packet_fills_its_size_with_payload_after_the_header() {
        let pkt = Packet {
            size: 100,
            header: Header::TfrcData(DataHeader {
                seq: 7,
                timestamp: Time(9),
                rtt: Dur(3),
                rtt_sample: Dur(2),
                rate: 1000,
                mode: Mode::Slowstart,
                round: 0,
            }),
        };
        let mut buf = [0xffu8; 2048];
        let mut fill = |p: &mut [u8]| p.fill(b'x');
        let n = encode(Protocol::Tfrc, &pkt, &mut buf, Some(&mut fill)).unwrap();
        assert_eq!(n, 100);
        assert!(buf[tfrc::DATA_LEN..100].iter().all(|&b| b == b'x'));
        let (h, at) = decode(Protocol::Tfrc, Direction::Data, &buf[..n]).unwrap();
        assert_eq!(h, pkt.header);
        assert_eq!(at, tfrc::DATA_LEN);
        // The wrong direction, or the wrong protocol, is refused.
        assert!(decode(Protocol::Tfrc, Direction::Feedback, &buf[..n]).is_err());
        assert!(decode(Protocol::Raw, Direction::Data, &buf[..n]).is_err());
        assert_eq!(
            encode(Protocol::Raw, &pkt, &mut buf, None),
            Err(WireError::Mismatch)
        );
    }

    #[test]
    fn feedback_smaller_than_its_size_field_is_the_bare_header_and_raw_round_trips() {
        let fb = Packet {
            size: 8,
            header: Header::TfrcFeedback(FeedbackHeader {
                seq_echo: 1,
                timestamp_echo: Time(2),
                t_delay: Dur(3),
                x_recv: 4,
                p: 0.25,
            }),
        };
        let mut buf = [0u8; 1500];
        let n = encode(Protocol::Tfrc, &fb, &mut buf, None).unwrap();
        assert_eq!(n, tfrc::FEEDBACK_LEN);
        let raw = Packet::raw(5, Time(6), 1000);
        let n = encode(Protocol::Raw, &raw, &mut buf, None).unwrap();
        assert_eq!(n, 1000);
        assert_eq!(
            decode(Protocol::Raw, Direction::Data, &buf[..n]).unwrap(),
            (raw.header, RAW_LEN)
        );
        // A buffer shorter than the packet caps the datagram.
        assert_eq!(encode(Protocol::Raw, &raw, &mut buf[..50], None), Ok(50));
    }

    #[test]
    fn tfwc_data_and_ack_vector_round_trip_with_payload_after_the_header() {
        let data = Packet {
            size: 1000,
            header: Header::TfwcData {
                seq: 42,
                sent_at: Time(123_456_789),
                aoa: Some(30),
            },
        };
        let mut buf = [0u8; 1500];
        let n = encode(Protocol::Tfwc, &data, &mut buf, None).unwrap();
        assert_eq!(n, 1000);
        let (h, at) = decode(Protocol::Tfwc, Direction::Data, &buf[..n]).unwrap();
        assert_eq!((h, at), (data.header, tfwc::DATA_LEN));
        // Packets 100, 99, 97 received, 98 lost, and everything below.
        let vector = tfcc_core::tfwc::AckVector {
            head: 100,
            bits: !(1u64 << 2),
        };
        let ack = Packet {
            size: 40,
            header: Header::TfwcAck {
                vector,
                echo: Time(5),
            },
        };
        let n = encode(Protocol::Tfwc, &ack, &mut buf, None).unwrap();
        let (h, at) = decode(Protocol::Tfwc, Direction::Feedback, &buf[..n]).unwrap();
        assert!(at <= n);
        let Header::TfwcAck { vector: v, echo } = h else {
            panic!("{h:?}");
        };
        assert_eq!(echo, Time(5));
        assert_eq!(v.head, 100);
        for k in 0..64 {
            assert_eq!(v.bits >> k & 1, vector.bits >> k & 1, "bit {k}");
        }
    }

    const WARC: Protocol = Protocol::Rate(warc::RateScheme::Warc);

    const ALL: [Protocol; 6] = [
        Protocol::Raw,
        Protocol::Tfrc,
        Protocol::Tfwc,
        WARC,
        Protocol::Rate(warc::RateScheme::Tear),
        Protocol::Rate(warc::RateScheme::Tfrcp),
    ];

    #[test]
    fn warc_data_and_report_round_trip_and_refuse_the_other_direction() {
        use tfcc_core::warc::{DataHeader, FeedbackHeader};
        let data = Packet {
            size: 972,
            header: Header::WarcData(DataHeader {
                seq: 9,
                sent_at: Time(1_000_000),
                rtt: Dur::from_millis(60),
                rto: Dur::from_millis(250),
            }),
        };
        let mut buf = [0u8; 1500];
        let n = encode(WARC, &data, &mut buf, None).unwrap();
        assert_eq!(n, 972);
        let (h, at) = decode(WARC, Direction::Data, &buf[..n]).unwrap();
        assert_eq!((h, at), (data.header, warc::DATA_LEN));
        assert!(decode(WARC, Direction::Feedback, &buf[..n]).is_err());
        assert!(decode(Protocol::Tfrc, Direction::Data, &buf[..n]).is_err());
        // TEAR's receiver refuses WARC's packets by name.
        let tear = Protocol::Rate(warc::RateScheme::Tear);
        assert_eq!(
            decode(tear, Direction::Data, &buf[..n]),
            Err(WireError::Warc(warc::DecodeError::WrongScheme {
                got: warc::RateScheme::Warc,
                expected: warc::RateScheme::Tear
            }))
        );
        let n = encode(tear, &data, &mut buf, None).unwrap();
        assert_eq!(
            decode(tear, Direction::Data, &buf[..n]).unwrap().0,
            data.header
        );
        // A report asked for at 12 B (40 B on the wire less UDP/IPv4's 28) is the bare header.
        let report = Packet {
            size: 12,
            header: Header::WarcFeedback(FeedbackHeader {
                echo: Time(1_000_000),
                hold: Dur::from_micros(40),
                rate: 17.25,
            }),
        };
        let n = encode(WARC, &report, &mut buf, None).unwrap();
        assert_eq!(n, warc::FEEDBACK_LEN);
        let (h, at) = decode(WARC, Direction::Feedback, &buf[..n]).unwrap();
        assert_eq!((h, at), (report.header, warc::FEEDBACK_LEN));
        // A NaN rate from a peer is junk, not a rate.
        buf[20..28].copy_from_slice(&f64::NAN.to_bits().to_be_bytes());
        assert_eq!(
            decode(WARC, Direction::Feedback, &buf[..n]),
            Err(WireError::Warc(warc::DecodeError::BadRate))
        );
        // Another protocol's header is not sent as WARC's, nor a WARC header into too little room.
        assert_eq!(
            encode(Protocol::Tfrc, &data, &mut buf, None),
            Err(WireError::Mismatch)
        );
        assert_eq!(
            encode(WARC, &data, &mut buf[..10], None),
            Err(WireError::Mismatch)
        );
    }

    #[test]
    fn every_header_is_identified_as_its_protocol_and_direction_by_its_type_word() {
        use tfcc_core::warc::{DataHeader as RateData, FeedbackHeader as RateReport};
        let tfrc_data = Header::TfrcData(DataHeader {
            seq: 1,
            timestamp: Time(2),
            rtt: Dur(3),
            rtt_sample: Dur(4),
            rate: 5,
            mode: Mode::CongestionControl,
            round: 6,
        });
        let tfrc_report = Header::TfrcFeedback(FeedbackHeader {
            seq_echo: 1,
            timestamp_echo: Time(2),
            t_delay: Dur(3),
            x_recv: 4,
            p: 0.5,
        });
        let tfwc_data = Header::TfwcData {
            seq: 1,
            sent_at: Time(2),
            aoa: None,
        };
        let vector = tfcc_core::tfwc::AckVector { head: 9, bits: 5 };
        let tfwc_ack = Header::TfwcAck {
            vector,
            echo: Time(3),
        };
        let rate_data = Header::WarcData(RateData {
            seq: 1,
            sent_at: Time(2),
            rtt: Dur(3),
            rto: Dur(4),
        });
        let rate_report = Header::WarcFeedback(RateReport {
            echo: Time(1),
            hold: Dur(2),
            rate: 3.5,
        });
        let mut cases = vec![
            (
                Protocol::Raw,
                Direction::Data,
                Packet::raw(1, Time(2), 0).header,
            ),
            (Protocol::Tfrc, Direction::Data, tfrc_data),
            (Protocol::Tfrc, Direction::Feedback, tfrc_report),
            (Protocol::Tfwc, Direction::Data, tfwc_data),
            (Protocol::Tfwc, Direction::Feedback, tfwc_ack),
        ];
        for s in warc::RateScheme::ALL {
            cases.push((Protocol::Rate(s), Direction::Data, rate_data));
            cases.push((Protocol::Rate(s), Direction::Feedback, rate_report));
        }
        let mut buf = [0u8; 1500];
        for (proto, dir, header) in cases {
            let n = encode(proto, &Packet { size: 0, header }, &mut buf, None).unwrap();
            assert_eq!(identify(&buf[..n]), Some((proto, dir)), "{header:?}");
            let (got, at) = decode(proto, dir, &buf[..n]).unwrap();
            assert_eq!((got, at), (header, n), "{}", proto.name());
            // The type word alone names it; a truncated header is the decoder's to refuse.
            assert_eq!(identify(&buf[..4]), Some((proto, dir)));
            assert!(decode(proto, dir, &buf[..n - 1]).is_err());
        }
        // Nothing names another protocol's words, a scheme code beyond TFRCP's, or fewer than
        // four bytes that are not TFWC's type byte.
        for word in [
            0x5446_0101u32,
            0x5446_0201,
            0x5446_0303,
            0x5752_0301,
            0x5752_0003,
            0,
        ] {
            assert_eq!(identify(&word.to_be_bytes()), None, "{word:#x}");
        }
        assert_eq!(identify(&[0x54, 0x46, 0x02]), None);
        assert_eq!(identify(&[]), None);
        assert_eq!(identify(&[2]), Some((Protocol::Tfwc, Direction::Feedback)));
    }

    /// The `(protocol, direction)` pairs that decode `bytes`, at most one; and it is the one
    /// [`identify`] names.
    fn check_identify_agrees_with_decode(bytes: &[u8]) -> Result<(), TestCaseError> {
        let mut read = Vec::new();
        for proto in ALL {
            for dir in [Direction::Data, Direction::Feedback] {
                if let Ok((_, at)) = decode(proto, dir, bytes) {
                    prop_assert!(at <= bytes.len());
                    read.push((proto, dir));
                }
            }
        }
        prop_assert!(read.len() <= 1, "{read:?}");
        if let Some(&only) = read.first() {
            prop_assert_eq!(identify(bytes), Some(only));
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn decoding_random_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_identify_agrees_with_decode(&bytes)?;
        }

        #[test]
        fn random_bytes_behind_a_valid_type_word_never_panic(
            word in prop_oneof![
                Just(RAW_WORD),
                Just(0x5446_0301u32),
                Just(0x5446_0302u32),
                Just(0x5752_0001u32),
                Just(0x5752_0002u32),
                Just(0x5752_0101u32),
                Just(0x5752_0202u32),
                // TFWC's data and ACK type bytes, then three random-ish bytes of the word.
                Just(0x0100_0000u32),
                Just(0x0200_0001u32),
            ],
            rest in proptest::collection::vec(any::<u8>(), 0..60),
        ) {
            let mut bytes = word.to_be_bytes().to_vec();
            bytes.extend(rest);
            check_identify_agrees_with_decode(&bytes)?;
        }
    }
}
