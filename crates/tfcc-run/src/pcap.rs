//! The traced links' departures as pcap files (`[trace] pcap = true`): what tcpdump on each
//! link's sending interface would have captured, so Wireshark, tshark and tcptrace read a
//! simulated run as they read a testbed capture.
//!
//! A simulated packet is a structured header and a size; the file needs bytes. Each `-` event
//! becomes a real IPv4 packet (LINKTYPE_RAW, nanosecond timestamps from the simulation clock):
//!
//! - addresses: node `n` of the run's numbering (the one `summary.json`'s `trace` section and
//!   `tfcc ns2-trace` use) is `10.1.0.0 + n`, so a flow's data goes from its sender's host to
//!   its receiver's and its feedback back;
//! - ports: flow `i` uses the testbed's port `5001 + i` at both ends
//!   ([`tfcc_net::testbed::flow_port`]), so the 5-tuple names the flow even where flows share
//!   hosts, and the dissector's port plan covers both backends;
//! - tfcc's UDP protocols (TFRC, TFWC, WARC, TEAR, TFRCP, CBR) carry the bytes the real
//!   transport sends ([`tfcc_net::wire::encode`]), payload zeros;
//! - tfcc's TCP model becomes real TCP: byte sequence numbers from segment numbers and the
//!   segment size, the SYN as a SYN (with MSS, window-scale and SACK-permitted options), the
//!   receiver's first ACK of it as the SYN-ACK, SACK blocks as a SACK option, the advertised
//!   window from the flow's `max_window`. The TCP timestamp option is not synthesised.
//!
//! Only headers are captured (`incl_len`); `orig_len` and the IP length are the simulator's
//! wire size, or what the real headers need where that is more (a 40-byte simulated report
//! that carries a 40-byte TFRC header in UDP/IPv4, a SYN's options, a SACK option's kind,
//! length and padding that ns-2's 8 bytes per block leave out). A TCP segment's length is
//! exactly its headers and payload, since Wireshark follows the byte stream by it. Checksums
//! are computed over the whole packet with its zero payload, so they verify on a reader that
//! pads the capture back to `orig_len`.
//!
//! The testbed (`--backend testbed`) writes the same files from real packets instead
//! ([`write_testbed_capture`], captured by tfcc_net::capture on the router's veths): the same
//! format and the same headers-only records ([`testbed_header_len`]), timestamps in run time,
//! but the testbed's own addresses (10.78.1.1 and 10.78.2.1), the senders' ephemeral ports and
//! the kernel's TCP with its timestamps.

use std::collections::HashSet;
use std::time::Duration;

use etherparse::{IpNumber, Ipv4Header, TcpHeader, TcpOptionElement, UdpHeader};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, Endianness, TsResolution};
use tfcc_core::packet::{Header, Packet};
use tfcc_core::tcp::wire::{TcpAck, TcpData};
use tfcc_core::tcp::{TcpConfig, Variant};
use tfcc_core::warc::wire::RateScheme;
use tfcc_net::wire::Protocol;
use tfcc_sim::trace::{TraceEvent, TraceRecord};
use tfcc_sim::LinkId;

/// The largest IPv4 packet.
const MAX_IP: usize = u16::MAX as usize;
const TTL: u8 = 64;

/// What a flow's packets look like on the wire.
#[derive(Clone, Debug)]
pub struct FlowWire {
    /// Sender's and receiver's addresses.
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub port: u16,
    /// The scheme a rate flow's headers name (WARC when the flow is none of them).
    pub scheme: RateScheme,
    /// The TCP model's numbers, for a TCP flow.
    pub tcp: Option<TcpWire>,
}

/// The numbers that turn segment numbers into a TCP byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpWire {
    /// Payload bytes per segment.
    pub mss: u32,
    /// Segment 0 is the modelled SYN, data starts at 1.
    pub syn: bool,
    /// The receiver's advertised window in bytes.
    pub window: u64,
    /// The window scale both ends announce, so that `window` fits the 16-bit field.
    pub shift: u8,
    /// SACK is negotiated (a SACK variant).
    pub sack: bool,
}

impl TcpWire {
    pub fn new(c: &TcpConfig) -> TcpWire {
        let window = u64::from(c.max_window).saturating_mul(u64::from(c.segment_size));
        let mut shift = 0u8;
        while shift < 14 && window >> shift > u64::from(u16::MAX) {
            shift += 1;
        }
        TcpWire {
            mss: c.segment_size.max(1),
            syn: c.syn,
            window,
            shift,
            sack: c.variant == Variant::Sack,
        }
    }

    /// The byte sequence number where segment `seg` starts (the SYN takes number 0, as its
    /// initial sequence number; data byte 1 follows it).
    fn byte(&self, seg: u64) -> u32 {
        let first = u64::from(self.syn);
        let data = seg.saturating_sub(first);
        // Sequence numbers wrap modulo 2^32 in TCP as here.
        (1u64.wrapping_add(data.wrapping_mul(u64::from(self.mss)))) as u32
    }

    fn window_field(&self) -> u16 {
        (self.window >> self.shift).min(u64::from(u16::MAX)) as u16
    }

    fn handshake_options(&self) -> Vec<TcpOptionElement> {
        let mss = u16::try_from(self.mss).unwrap_or(u16::MAX);
        let mut o = vec![
            TcpOptionElement::MaximumSegmentSize(mss),
            TcpOptionElement::WindowScale(self.shift),
        ];
        if self.sack {
            o.push(TcpOptionElement::SelectiveAcknowledgementPermitted);
        }
        o
    }
}

/// Node `n` of the run's numbering as an address: `10.1.0.0 + n`.
pub fn node_address(n: u32) -> [u8; 4] {
    (0x0a01_0000u32.wrapping_add(n)).to_be_bytes()
}

/// Per flow (by id) its wire form; built when the run is prepared, since the flows' endpoints
/// move into the simulation.
#[derive(Clone, Debug, Default)]
pub struct PcapPlan {
    pub flows: Vec<FlowWire>,
}

impl PcapPlan {
    /// The plan for `flows`, whose ends are `ends` (the trace section's, node numbers as
    /// `tfcc ns2-trace` numbers them).
    pub fn new(flows: &[tfcc_sim::FlowSpec], ends: &[crate::summary::FlowEnds]) -> PcapPlan {
        let flows = flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let e = ends.iter().find(|e| e.id as usize == i);
                FlowWire {
                    src: node_address(e.map_or(0, |e| e.src_node)),
                    dst: node_address(e.map_or(0, |e| e.dst_node)),
                    port: tfcc_net::testbed::flow_port(i),
                    scheme: RateScheme::from_name(&f.protocol).unwrap_or(RateScheme::Warc),
                    tcp: f.sender.tcp().map(|t| TcpWire::new(t.config())),
                }
            })
            .collect();
        PcapPlan { flows }
    }
}

/// One pcap file: its name in the run's directory and its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The file name of link `link`'s capture: `trace-<link>.pcap`, with any character that is
/// not a letter, digit, `-`, `_` or `.` replaced by `_`.
pub fn file_name(link: &str) -> String {
    let safe: String = link
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("trace-{safe}.pcap")
}

/// Builds the packets of one run's captures.
pub struct Encoder<'a> {
    plan: &'a PcapPlan,
    /// A packet's bytes, headers then zeros to its length; the zeros are restored after each.
    scratch: Vec<u8>,
    /// (link, flow) whose receiver's first ACK of the SYN has been written as the SYN-ACK.
    syn_acked: HashSet<(LinkId, u32)>,
}

/// A packet as the file holds it: the headers, and the length of the whole packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    pub headers: Vec<u8>,
    pub len: usize,
}

impl<'a> Encoder<'a> {
    pub fn new(plan: &'a PcapPlan) -> Self {
        Encoder {
            plan,
            scratch: vec![0; MAX_IP],
            syn_acked: HashSet::new(),
        }
    }

    /// The IPv4 packet of `pkt`, which flow `flow` sent in direction `reverse` (feedback) and
    /// which `link` is sending.
    pub fn encode(
        &mut self,
        link: LinkId,
        flow: u32,
        reverse: bool,
        pkt: &Packet,
    ) -> Result<Encoded, String> {
        let f =
            self.plan.flows.get(flow as usize).ok_or_else(|| {
                format!("trace.pcap: a packet of flow {flow}, which the run has not")
            })?;
        let (src, dst) = if reverse {
            (f.dst, f.src)
        } else {
            (f.src, f.dst)
        };
        match pkt.header {
            Header::TcpData(d) => {
                let w = f.tcp.unwrap_or_else(|| TcpWire::new(&TcpConfig::default()));
                self.tcp_data(src, dst, f.port, &w, &d)
            }
            Header::TcpAck(a) => {
                let w = f.tcp.unwrap_or_else(|| TcpWire::new(&TcpConfig::default()));
                let syn_ack = w.syn && a.ack == 1 && self.syn_acked.insert((link, flow));
                self.tcp_ack(src, dst, f.port, &w, &a, syn_ack)
            }
            h => {
                let proto = match h {
                    Header::Raw { .. } => Protocol::Raw,
                    Header::TfrcData(_) | Header::TfrcFeedback(_) => Protocol::Tfrc,
                    Header::TfwcData { .. } | Header::TfwcAck { .. } => Protocol::Tfwc,
                    Header::WarcData(_) | Header::WarcFeedback(_) => Protocol::Rate(f.scheme),
                    _ => {
                        return Err(format!(
                            "trace.pcap: flow {flow} sent a packet with no wire encoding"
                        ))
                    }
                };
                self.udp(src, dst, f.port, proto, pkt)
            }
        }
    }

    fn udp(
        &mut self,
        src: [u8; 4],
        dst: [u8; 4],
        port: u16,
        proto: Protocol,
        pkt: &Packet,
    ) -> Result<Encoded, String> {
        const IP_UDP: usize = Ipv4Header::MIN_LEN + UdpHeader::LEN;
        // Size 0: the header alone, its length returned.
        let bare = Packet { size: 0, ..*pkt };
        let hdr = tfcc_net::wire::encode(proto, &bare, &mut self.scratch[IP_UDP..], None)
            .map_err(|e| format!("trace.pcap: cannot encode a {proto:?} packet ({e})"))?;
        let len = (pkt.size as usize).max(IP_UDP + hdr);
        if len > MAX_IP {
            return Err(too_big(len));
        }
        let payload = &self.scratch[IP_UDP..len];
        let ip = ipv4(len, IpNumber::UDP, src, dst)?;
        let udp =
            UdpHeader::with_ipv4_checksum(port, port, &ip, payload).map_err(|_| too_big(len))?;
        let mut headers = Vec::with_capacity(IP_UDP + hdr);
        write_ip(&ip, &mut headers);
        headers.extend_from_slice(&udp.to_bytes());
        headers.extend_from_slice(&self.scratch[IP_UDP..IP_UDP + hdr]);
        self.scratch[IP_UDP..IP_UDP + hdr].fill(0);
        Ok(Encoded { headers, len })
    }

    fn tcp_data(
        &mut self,
        src: [u8; 4],
        dst: [u8; 4],
        port: u16,
        w: &TcpWire,
        d: &TcpData,
    ) -> Result<Encoded, String> {
        let mut t = TcpHeader::new(port, port, w.byte(d.seq), w.window_field());
        let syn = w.syn && d.seq == 0 && d.payload == 0;
        if syn {
            t.syn = true;
            t.sequence_number = 0;
            set_options(&mut t, &w.handshake_options())?;
        } else {
            // The receiver's SYN-ACK took its number 0.
            t.ack = true;
            t.acknowledgment_number = 1;
        }
        self.tcp(src, dst, t, d.payload as usize)
    }

    fn tcp_ack(
        &mut self,
        src: [u8; 4],
        dst: [u8; 4],
        port: u16,
        w: &TcpWire,
        a: &TcpAck,
        syn_ack: bool,
    ) -> Result<Encoded, String> {
        let mut t = TcpHeader::new(port, port, u32::from(!syn_ack), w.window_field());
        t.ack = true;
        t.acknowledgment_number = w.byte(a.ack);
        if syn_ack {
            t.syn = true;
            set_options(&mut t, &w.handshake_options())?;
        }
        let blocks = a.sack_blocks();
        if let Some((first, rest)) = blocks.split_first() {
            let edge = |b: &tfcc_core::tcp::wire::SackBlock| (w.byte(b.left), w.byte(b.right));
            let mut more = [None; 3];
            for (m, b) in more.iter_mut().zip(rest) {
                *m = Some(edge(b));
            }
            let mut opts = vec![TcpOptionElement::Noop, TcpOptionElement::Noop];
            opts.push(TcpOptionElement::SelectiveAcknowledgement(
                edge(first),
                more,
            ));
            if syn_ack {
                opts.extend(w.handshake_options());
            }
            set_options(&mut t, &opts)?;
        }
        self.tcp(src, dst, t, 0)
    }

    fn tcp(
        &mut self,
        src: [u8; 4],
        dst: [u8; 4],
        mut t: TcpHeader,
        payload: usize,
    ) -> Result<Encoded, String> {
        let len = Ipv4Header::MIN_LEN + t.header_len() + payload;
        if len > MAX_IP {
            return Err(too_big(len));
        }
        let ip = ipv4(len, IpNumber::TCP, src, dst)?;
        t.checksum = t
            .calc_checksum_ipv4(&ip, &self.scratch[..payload])
            .map_err(|_| too_big(len))?;
        let mut headers = Vec::with_capacity(Ipv4Header::MIN_LEN + t.header_len());
        write_ip(&ip, &mut headers);
        headers.extend_from_slice(&t.to_bytes());
        Ok(Encoded { headers, len })
    }
}

fn too_big(len: usize) -> String {
    format!("trace.pcap: a packet of {len} B does not fit an IPv4 packet (at most {MAX_IP} B)")
}

fn set_options(t: &mut TcpHeader, o: &[TcpOptionElement]) -> Result<(), String> {
    t.set_options(o)
        .map_err(|e| format!("trace.pcap: TCP options do not fit ({e})"))
}

fn ipv4(len: usize, proto: IpNumber, src: [u8; 4], dst: [u8; 4]) -> Result<Ipv4Header, String> {
    let payload = u16::try_from(len - Ipv4Header::MIN_LEN).map_err(|_| too_big(len))?;
    let mut ip = Ipv4Header::new(payload, TTL, proto, src, dst).map_err(|_| too_big(len))?;
    ip.header_checksum = ip.calc_header_checksum();
    Ok(ip)
}

fn write_ip(ip: &Ipv4Header, out: &mut Vec<u8>) {
    out.extend_from_slice(&ip.to_bytes());
}

/// The global header of every tfcc pcap file, the simulator's and the testbed's: raw IP,
/// nanosecond timestamps, little-endian fixed (not the machine's), so the same run gives the
/// same bytes everywhere. The snap length is the largest IP packet: the testbed keeps at most
/// [`tfcc_net::capture::KERNEL_SNAP`] bytes of each, but readers such as pcap-file's refuse a
/// record longer on the wire than the snap length (which tcpdump's `-s` writes and libpcap
/// accepts).
fn file_header() -> PcapHeader {
    PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: MAX_IP as u32,
        datalink: DataLink::RAW,
        ts_resolution: TsResolution::NanoSecond,
        endianness: Endianness::Little,
    }
}

/// The pcap files of a trace: one per traced link (`names`, by link id), each holding the
/// packets of its `-` records in `records` (whose packets are `sent`, in the same order).
pub fn write_captures(
    plan: &PcapPlan,
    names: &[Option<String>],
    records: &[TraceRecord],
    sent: &[Packet],
) -> Result<Vec<PcapFile>, String> {
    let header = file_header();
    let pcap_err = |e: pcap_file::PcapError| format!("trace.pcap: {e}");
    let mut writers: Vec<Option<PcapWriter<Vec<u8>>>> = Vec::with_capacity(names.len());
    for n in names {
        writers.push(match n {
            Some(_) => Some(PcapWriter::with_header(Vec::new(), header).map_err(pcap_err)?),
            None => None,
        });
    }
    let mut enc = Encoder::new(plan);
    let mut sent = sent.iter();
    for r in records.iter().filter(|r| r.event == TraceEvent::Dequeue) {
        let pkt = sent
            .next()
            .ok_or("trace.pcap: fewer packets kept than departures traced")?;
        let Some(Some(w)) = writers.get_mut(r.link as usize) else {
            continue;
        };
        let e = enc.encode(
            r.link,
            r.flow,
            r.dir == tfcc_sim::packet_pool::Direction::Reverse,
            pkt,
        )?;
        let ts = Duration::from_nanos(r.time.as_nanos());
        w.write_packet(&PcapPacket::new(ts, e.len as u32, &e.headers))
            .map_err(pcap_err)?;
    }
    Ok(names
        .iter()
        .zip(writers)
        .filter_map(|(n, w)| {
            Some(PcapFile {
                name: file_name(n.as_deref()?),
                bytes: w?.into_writer(),
            })
        })
        .collect())
}

/// What a testbed packet's file record keeps: its IPv4 header, and after it the TCP header with
/// its options, or the UDP header and, for a datagram of one of the run's tfcc flows, that
/// flow's header as it decodes (`flows`: each flow's port and, for a tfcc flow, its protocol;
/// the flow is the one whose receiver's port is the datagram's destination, its data, or
/// source, its feedback). Anything else keeps 8 bytes after the IP header (UDP's, ICMP's).
/// So a record holds the headers the simulator's files hold, and no payload.
pub fn testbed_header_len(p: &[u8], flows: &[(u16, Option<Protocol>)]) -> usize {
    if p.len() < Ipv4Header::MIN_LEN || p[0] >> 4 != 4 {
        return p.len().min(Ipv4Header::MIN_LEN);
    }
    let ihl = usize::from(p[0] & 0x0f) * 4;
    let fragment_offset = u16::from_be_bytes([p[6] & 0x1f, p[7]]);
    let transport = p.get(ihl..).unwrap_or_default();
    if fragment_offset != 0 || transport.is_empty() {
        return ihl.min(p.len());
    }
    let len = match IpNumber(p[9]) {
        IpNumber::TCP => ihl + transport.get(12).map_or(20, |b| usize::from(b >> 4) * 4),
        IpNumber::UDP if transport.len() >= UdpHeader::LEN => {
            let sport = u16::from_be_bytes([transport[0], transport[1]]);
            let dport = u16::from_be_bytes([transport[2], transport[3]]);
            let payload = &transport[UdpHeader::LEN..];
            let tfcc = flows.iter().find_map(|&(port, proto)| {
                let dir = if dport == port {
                    tfcc_net::wire::Direction::Data
                } else if sport == port {
                    tfcc_net::wire::Direction::Feedback
                } else {
                    return None;
                };
                tfcc_net::wire::decode(proto?, dir, payload)
                    .ok()
                    .map(|(_, n)| n)
            });
            ihl + UdpHeader::LEN + tfcc.unwrap_or(0)
        }
        _ => ihl + 8,
    };
    len.min(p.len())
}

/// One testbed capture as a pcap file: the packets whose run time (their kernel timestamp less
/// `origin_ns`, the run's start on the same real-time clock) is in `from ≤ t < until`, or
/// `t ≤ until` when `until` is the end of the run (`inclusive`), as the simulator's trace
/// keeps the events at the run's end; timestamps in run time, as the simulator's files have
/// them. Returns the file and how many packets it holds.
pub fn write_testbed_capture(
    link: &str,
    packets: &[tfcc_net::capture::Captured],
    origin_ns: u64,
    from: Duration,
    until: Duration,
    inclusive: bool,
) -> Result<(PcapFile, usize), String> {
    let header = file_header();
    let name = file_name(link);
    let pcap_err = |e: pcap_file::PcapError| format!("{name}: {e}");
    let mut w = PcapWriter::with_header(Vec::new(), header).map_err(pcap_err)?;
    let mut n = 0;
    for p in packets {
        // Before the run's start (the set-up's packets, if any) is outside every window.
        let Some(t) = p
            .realtime_ns
            .checked_sub(origin_ns)
            .map(Duration::from_nanos)
        else {
            continue;
        };
        if t < from || t > until || (t == until && !inclusive) {
            continue;
        }
        w.write_packet(&PcapPacket::new(t, p.len, &p.headers))
            .map_err(pcap_err)?;
        n += 1;
    }
    Ok((
        PcapFile {
            name,
            bytes: w.into_writer(),
        },
        n,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{NetSlice, SlicedPacket, TransportSlice};
    use tfcc_core::tcp::wire::SackBlock;
    use tfcc_core::{Dur, Time};

    fn plan(tcp: Option<TcpWire>) -> PcapPlan {
        PcapPlan {
            flows: vec![FlowWire {
                src: node_address(2),
                dst: node_address(3),
                port: tfcc_net::testbed::flow_port(0),
                scheme: RateScheme::Tear,
                tcp,
            }],
        }
    }

    fn sack_wire() -> TcpWire {
        TcpWire::new(&TcpConfig {
            variant: Variant::Sack,
            ..TcpConfig::default()
        })
    }

    /// The whole packet as the network carries it: the captured headers, then zeros.
    fn padded(e: &Encoded) -> Vec<u8> {
        let mut v = e.headers.clone();
        v.resize(e.len, 0);
        v
    }

    /// The ones'-complement sum of the pseudo-header and the transport segment, which a
    /// receiver checks is all ones (RFC 768, RFC 793): computed here by hand, not by
    /// etherparse, which wrote the checksums.
    fn transport_sum_ok(p: &[u8]) -> bool {
        let ihl = usize::from(p[0] & 0xf) * 4;
        let seg = &p[ihl..];
        let mut sum: u32 = 0;
        let mut add = |b: &[u8]| {
            for c in b.chunks(2) {
                sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
            }
        };
        add(&p[12..20]);
        add(&[0, p[9]]);
        add(&(seg.len() as u16).to_be_bytes());
        add(seg);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    #[test]
    fn a_tcp_ack_with_sack_blocks_reads_back_as_real_tcp() {
        let w = sack_wire();
        let p = plan(Some(w));
        let mut enc = Encoder::new(&p);
        let mut a = TcpAck::new(5, Time::ZERO);
        assert!(a.push_sack(SackBlock { left: 7, right: 9 }));
        assert!(a.push_sack(SackBlock {
            left: 11,
            right: 12
        }));
        let e = enc
            .encode(
                0,
                0,
                true,
                &Packet {
                    size: 56,
                    header: Header::TcpAck(a),
                },
            )
            .unwrap();
        // 20 IP + 20 TCP + NOP NOP + SACK(2 blocks) = 60: the simulator's 56 (40 + 8 per block)
        // lacks the option's kind, length and padding.
        assert_eq!(e.len, 60);
        assert_eq!(e.headers.len(), 60);
        let full = padded(&e);
        let s = SlicedPacket::from_ip(&full).unwrap();
        let Some(NetSlice::Ipv4(ip)) = &s.net else {
            panic!("not IPv4")
        };
        let ip = ip.header();
        assert_eq!(
            ip.source(),
            [10, 1, 0, 3],
            "feedback comes from the receiver"
        );
        assert_eq!(ip.destination(), [10, 1, 0, 2]);
        assert_eq!(ip.total_len(), 60);
        assert_eq!(ip.to_header().calc_header_checksum(), ip.header_checksum());
        let Some(TransportSlice::Tcp(t)) = &s.transport else {
            panic!("not TCP")
        };
        assert!(t.ack() && !t.syn());
        assert_eq!((t.source_port(), t.destination_port()), (5001, 5001));
        // Segment 5 is the 4th data segment (1 is the first after the SYN): byte 1 + 4 × 1000.
        assert_eq!(t.acknowledgment_number(), 4001);
        assert_eq!(t.sequence_number(), 1);
        let sack: Vec<_> = t.options_iterator().map(|o| o.unwrap()).collect();
        assert_eq!(
            sack,
            vec![
                TcpOptionElement::Noop,
                TcpOptionElement::Noop,
                TcpOptionElement::SelectiveAcknowledgement(
                    (6001, 8001),
                    [Some((10001, 11001)), None, None]
                ),
            ]
        );
        // 10 000 segments of 1000 B: 10 MB, which a shift of 8 brings under 65 535.
        assert_eq!(w.shift, 8);
        assert_eq!(t.window_size(), (10_000_000u64 >> 8) as u16);
        let th = t.to_header();
        assert_eq!(
            th.calc_checksum_ipv4(&ip.to_header(), &[]).unwrap(),
            th.checksum
        );
        assert!(transport_sum_ok(&full));
    }

    #[test]
    fn segments_count_bytes_and_the_syn_and_its_ack_carry_the_handshake() {
        let w = sack_wire();
        let p = plan(Some(w));
        let mut enc = Encoder::new(&p);
        let seg = |seq, payload| Packet {
            size: payload + 40,
            header: Header::TcpData(TcpData {
                seq,
                ts: Time::ZERO,
                payload,
                retransmit: false,
            }),
        };
        let syn = enc.encode(0, 0, false, &seg(0, 0)).unwrap();
        let s = SlicedPacket::from_ip(&syn.headers).unwrap();
        let Some(TransportSlice::Tcp(t)) = s.transport else {
            panic!()
        };
        assert!(t.syn() && !t.ack());
        assert_eq!(t.sequence_number(), 0);
        assert!(t
            .options_iterator()
            .any(|o| o == Ok(TcpOptionElement::SelectiveAcknowledgementPermitted)));
        // The SYN's options (MSS, window scale, SACK-permitted, padding) make it 52 B where
        // the simulator charges 40.
        assert_eq!(syn.len, 52);
        let d = enc.encode(0, 0, false, &seg(3, 1000)).unwrap();
        assert_eq!(d.len, 1040, "a data segment is the simulator's size");
        assert_eq!(d.headers.len(), 40, "only headers are captured");
        let full = padded(&d);
        let s = SlicedPacket::from_ip(&full).unwrap();
        let Some(TransportSlice::Tcp(t)) = &s.transport else {
            panic!()
        };
        assert_eq!(t.sequence_number(), 2001);
        assert!(t.ack() && !t.syn());
        assert_eq!(s.ip_payload().unwrap().payload.len(), 1040 - 20);
        assert!(transport_sum_ok(&full));
        // The receiver's first ACK of the SYN is the SYN-ACK, once per link; later ones not.
        let ack1 = Packet {
            size: 40,
            header: Header::TcpAck(TcpAck::new(1, Time::ZERO)),
        };
        let flags = |e: &Encoded| {
            let s = SlicedPacket::from_ip(&e.headers).unwrap();
            let Some(TransportSlice::Tcp(t)) = s.transport else {
                panic!()
            };
            (
                t.syn(),
                t.ack(),
                t.sequence_number(),
                t.acknowledgment_number(),
            )
        };
        assert_eq!(
            flags(&enc.encode(0, 0, true, &ack1).unwrap()),
            (true, true, 0, 1)
        );
        assert_eq!(
            flags(&enc.encode(0, 0, true, &ack1).unwrap()),
            (false, true, 1, 1)
        );
        assert_eq!(
            flags(&enc.encode(1, 0, true, &ack1).unwrap()),
            (true, true, 0, 1)
        );
    }

    #[test]
    fn udp_packets_carry_tfccs_wire_headers_with_a_checksum_over_the_whole_datagram() {
        let p = plan(None);
        let mut enc = Encoder::new(&p);
        let fb = tfcc_core::tfrc::FeedbackHeader {
            seq_echo: 41,
            timestamp_echo: Time::from_millis(3),
            t_delay: Dur::from_micros(250),
            x_recv: 123_456,
            p: 0.0125,
        };
        // A 40-byte report (ns-2's size) cannot hold UDP/IPv4 and the 40-byte header: 68.
        let e = enc
            .encode(
                0,
                0,
                true,
                &Packet {
                    size: 40,
                    header: Header::TfrcFeedback(fb),
                },
            )
            .unwrap();
        assert_eq!(e.len, 68);
        let s = SlicedPacket::from_ip(&e.headers).unwrap();
        let Some(TransportSlice::Udp(u)) = &s.transport else {
            panic!("not UDP")
        };
        assert_eq!(u.length(), 48);
        let got = tfcc_core::tfrc::FeedbackHeader::decode(u.payload()).unwrap();
        assert_eq!(got, fb);
        assert!(transport_sum_ok(&padded(&e)));
        // A data packet is the simulator's size, its header at the front of zeros.
        let d = tfcc_core::warc::DataHeader {
            seq: 9,
            sent_at: Time::from_millis(1),
            rtt: Dur::from_millis(40),
            rto: Dur::from_millis(200),
        };
        let e = enc
            .encode(
                0,
                0,
                false,
                &Packet {
                    size: 1000,
                    header: Header::WarcData(d),
                },
            )
            .unwrap();
        assert_eq!((e.len, e.headers.len()), (1000, 28 + 36));
        let full = padded(&e);
        assert!(transport_sum_ok(&full));
        let s = SlicedPacket::from_ip(&full).unwrap();
        let Some(TransportSlice::Udp(u)) = &s.transport else {
            panic!()
        };
        // The flow's scheme is in the type word: a WARC reader refuses it, a TEAR one takes it.
        assert!(tfcc_core::warc::DataHeader::decode(u.payload()).is_err());
        assert_eq!(
            tfcc_core::warc::DataHeader::decode_as(RateScheme::Tear, u.payload()).unwrap(),
            d
        );
        // A flipped bit anywhere fails the check (the sum is a real one).
        let mut bad = full.clone();
        bad[40] ^= 1;
        assert!(!transport_sum_ok(&bad));
    }

    #[test]
    fn a_capture_is_a_nanosecond_raw_ip_pcap_of_the_departures_only() {
        use tfcc_sim::packet_pool::Direction;
        use tfcc_sim::trace::Message;
        let p = plan(None);
        let names = vec![None, Some("bottleneck".to_string())];
        let pkt = Packet::raw(4, Time::ZERO, 1000);
        let rec = |ns, ev, link| {
            TraceRecord::new(
                Time::from_nanos(ns),
                ev,
                link,
                0,
                Direction::Forward,
                Message::Raw,
                Some(4),
                1000,
            )
        };
        let records = [
            rec(5, TraceEvent::Enqueue, 1),
            rec(1_500_000_007, TraceEvent::Dequeue, 1),
            rec(1_600_000_000, TraceEvent::Receive, 1),
        ];
        let files = write_captures(&p, &names, &records, &[pkt]).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].name, "trace-bottleneck.pcap");
        let b = &files[0].bytes;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        assert_eq!(u32_at(0), 0xa1b2_3c4d, "nanosecond magic");
        assert_eq!(u32_at(20), 101, "LINKTYPE_RAW");
        // One record: 1.500000007 s, 48 bytes captured (IP, UDP, the 20-byte raw header) of
        // 1000.
        assert_eq!(b.len(), 24 + 16 + 48);
        assert_eq!((u32_at(24), u32_at(28)), (1, 500_000_007));
        assert_eq!((u32_at(32), u32_at(36)), (48, 1000));
        assert_eq!(b[40] >> 4, 4);
        assert_eq!(file_name("a b/c"), "trace-a_b_c.pcap");
    }
}
