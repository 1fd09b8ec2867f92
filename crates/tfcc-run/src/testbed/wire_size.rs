//! The simulator's packet sizes on the testbed's wire. The simulator counts a packet's bytes
//! as they cross the bottleneck, headers included; on the testbed the kernel adds the UDP/IPv4
//! or TCP/IPv4 headers itself. Each flow's sizes are therefore mapped here, so that a packet
//! takes the simulator's bytes on the bottleneck's tbf and pfifo, and the receivers' byte
//! counts are scaled back to what the simulator would have counted. A size that cannot be
//! mapped (too small for tfcc's header, too large for the path's MTU) is refused with the
//! reason.

use tfcc_net::testbed::{FlowKind, FlowResult, FlowSpec};

/// UDP/IPv4 header bytes the kernel puts on the wire in front of each datagram's payload.
const UDP_IPV4_HEADER: u32 = 28;

/// The bytes of each packet of a bulk TFRC flow that the kernel's UDP/IPv4 headers make up on
/// the testbed: the flow runs the simulator's own configuration inside
/// `tfcc_net::testbed::KernelHeaders`, as a video-fed one does ([`kernel_header_bytes`]), so a
/// packet is the simulator's `packet_size + header_size` on the bottleneck whatever its
/// `header_size` (the 004 scenarios' 28: 1460 B datagrams, 1488 B on the wire; ns-2's
/// `headersize_ 32`: 1004 B datagrams for 1032 B; the thesis preset's 0: 1432 B datagrams for
/// 1460 B), and its receiver counts the simulator's bytes. Until 2026-11-28 the datagram was
/// `packet_size` plus what `header_size` has beyond 28, so below 28 (the thesis preset) a
/// packet was `28 - header_size` bytes longer on the bottleneck than in the simulator. A packet
/// too small for UDP/IPv4 and tfcc's 44-byte data header would go out padded, more bytes on
/// the bottleneck than the simulator's packet: refused, as TFWC's is.
pub(super) fn tfrc_on_udp(cfg: &tfcc_core::tfrc::TfrcConfig) -> Result<u32, String> {
    kernel_header_bytes(cfg.wire_size(), tfcc_core::tfrc::wire::DATA_LEN, "TFRC")
}

/// A TFWC flow's configuration for the real UDP transport, with the bytes per packet the
/// simulator counts as delivered and the bytes the testbed's receiver counts. In the simulator
/// a TFWC packet's `packet_size` is the whole packet on the wire (ns-2's `Agent/TFWC` `size_`,
/// 1000 B in 002 Ch. 4; `TfwcConfig::packet_size`), so the datagram here is 28 B shorter and
/// the kernel's UDP/IPv4 headers make it the same size on the bottleneck (972 + 28 = 1000 B;
/// it was 1028 B). The window, and the rate mode's `s/X`, do not depend on `s`, so the
/// protocol runs the same. Goodput: the simulator counts `packet_size - header_size` per
/// packet (the whole 1000 B with the default `header_size = 0`), the receiver here counts the
/// datagram less what remains of `header_size` after the 28 B the kernel carries. The caller
/// scales the receiver's bytes by simulator / testbed bytes per packet, which is exact since
/// every bulk TFWC datagram has `packet_size` bytes. A video-fed TFWC flow (its tails short)
/// runs the simulator's configuration instead ([`kernel_header_bytes`]).
pub(super) fn tfwc_on_udp(
    cfg: &tfcc_core::tfwc::TfwcConfig,
) -> Result<(tfcc_core::tfwc::TfwcConfig, u32, u32), String> {
    let min = UDP_IPV4_HEADER + tfcc_core::tfwc::wire::DATA_LEN as u32;
    if cfg.packet_size < min {
        return Err(format!(
            "a TFWC packet of {} B cannot carry UDP/IPv4's {UDP_IPV4_HEADER} B and tfcc's {} B \
             header (at least {min} B)",
            cfg.packet_size,
            tfcc_core::tfwc::wire::DATA_LEN
        ));
    }
    let mut c = cfg.clone();
    c.packet_size -= UDP_IPV4_HEADER;
    c.header_size = c.header_size.saturating_sub(UDP_IPV4_HEADER);
    let sim = cfg.packet_size - cfg.header_size.min(cfg.packet_size);
    let here = c.packet_size - c.header_size.min(c.packet_size);
    Ok((c, sim, here.max(1)))
}

/// A rate flow's (WARC's, TEAR's, TFRCP's: `scheme`) sender configuration for the real UDP
/// transport, with the bytes per packet the simulator counts as delivered and the bytes the
/// testbed's receiver counts. The
/// simulator's `packet_size` is the packet on the wire (003 Sec. 5's 1000 B, `RateSenderConfig`)
/// and its receiver counts it whole, as TFWC's: the datagram here is 28 B shorter so that the
/// kernel's UDP/IPv4 headers make it the same on the bottleneck, and the caller scales the
/// receiver's bytes back (every data datagram of theirs is full-size). The rate is packets per RTT, so
/// the protocol runs the same. A report is `feedback_size` on the wire too (a TCP ACK's 40 B
/// by default) but cannot be shorter than UDP/IPv4 and tfcc's 28-byte report header: 56 B
/// here, which only the reverse direction carries.
pub(super) fn rate_on_udp(
    cfg: &tfcc_core::warc::RateSenderConfig,
    scheme: &str,
) -> Result<(tfcc_core::warc::RateSenderConfig, u32, u32), String> {
    let header = tfcc_core::warc::wire::DATA_LEN as u32;
    let min = UDP_IPV4_HEADER + header;
    if cfg.packet_size < min {
        return Err(format!(
            "a {} packet of {} B cannot carry UDP/IPv4's {UDP_IPV4_HEADER} B and tfcc's \
             {header} B data header (at least {min} B)",
            scheme.to_uppercase(),
            cfg.packet_size
        ));
    }
    let mut c = cfg.clone();
    c.packet_size -= UDP_IPV4_HEADER;
    c.feedback_size = c.feedback_size.saturating_sub(UDP_IPV4_HEADER).max(1);
    let here = c.packet_size;
    Ok((c, cfg.packet_size, here))
}

/// A CBR flow's configuration for the real UDP transport, with the bytes per packet the
/// simulator counts as delivered and the bytes the testbed's receiver counts. The simulator's
/// `packet_size` and `rate` count whole packets on the wire (ns-2's CBR `packetSize_`, which
/// its sink counts whole), so the datagram here is 28 B shorter, the kernel's UDP/IPv4 headers
/// making up the rest, and the rate is scaled by the same ratio: the datagrams then leave at
/// the simulator's times (one every `packet_size · 8 / rate`) and take its bytes on the
/// bottleneck. The rate's rounding to whole bits per second moves the send times by less than
/// one part in a million at the rates here. A video-fed CBR flow only has its size checked
/// here: it runs the simulator's packet size and rate ([`kernel_header_bytes`]).
pub(super) fn cbr_on_udp(
    cfg: &tfcc_sim::CbrConfig,
) -> Result<(tfcc_sim::CbrConfig, u32, u32), String> {
    let header = tfcc_net::wire::RAW_LEN as u32;
    let min = UDP_IPV4_HEADER + header;
    if cfg.packet_size < min {
        return Err(format!(
            "a CBR packet of {} B cannot carry UDP/IPv4's {UDP_IPV4_HEADER} B and tfcc's \
             {header} B sequence header (at least {min} B)",
            cfg.packet_size
        ));
    }
    let here = cfg.packet_size - UDP_IPV4_HEADER;
    let bps = u128::from(cfg.rate.bps()) * u128::from(here) / u128::from(cfg.packet_size);
    let c = tfcc_sim::CbrConfig {
        rate: tfcc_core::Rate::from_bps(bps.max(1) as u64),
        packet_size: here,
        on_off: cfg.on_off,
    };
    Ok((c, cfg.packet_size, here))
}

/// The bytes of each packet of a video-fed TFRC, TFWC or CBR flow (and of a bulk TFRC flow,
/// [`tfrc_on_udp`]; `what` names the flow in the refusal) that the kernel's UDP/IPv4
/// headers make up on the testbed, given the simulator's largest packet of it on the wire
/// (`wire`: TFWC's and CBR's `packet_size`, TFRC's `packet_size + header_size`) and tfcc's
/// data header for the protocol (`header` bytes, inside the datagram). Such a flow runs the
/// simulator's own sender and receiver configuration, each data packet sent that many bytes
/// shorter and counted that many bytes longer at the receiver
/// (`tfcc_net::testbed::KernelHeaders`): a packet takes the simulator's bytes of the frames
/// and is the simulator's size on the bottleneck, so that packets per frame, the send buffer,
/// `frames.parquet` and the bytes delivered are the simulator's, figure for figure. tfcc's
/// header rides inside the datagram, its cost not charged to the video, as the simulator's
/// packets are all the application's. A full packet that cannot hold UDP/IPv4 and tfcc's
/// header would go out padded, more bytes on the bottleneck than the simulator's: refused.
pub(super) fn kernel_header_bytes(wire: u32, header: usize, what: &str) -> Result<u32, String> {
    let min = UDP_IPV4_HEADER + header as u32;
    if wire < min {
        return Err(format!(
            "a {what} packet of {wire} B on the wire cannot carry UDP/IPv4's \
             {UDP_IPV4_HEADER} B and tfcc's {header} B data header (at least {min} B)"
        ));
    }
    Ok(UDP_IPV4_HEADER)
}

/// IPv4 and TCP headers without options.
const TCP_IPV4_HEADER: u32 = 40;
/// Linux's TCP timestamp option, padded: on every segment, since `net.ipv4.tcp_timestamps` is
/// 1 (the default) in the testbed's namespaces, and the spurious-timeout counts read them.
const TCP_TIMESTAMPS: u32 = 12;
/// The testbed path's MTU: the veths' and the relay's TUN device's (both Linux's default).
pub(super) const PATH_MTU: u32 = 1500;
/// Linux's smallest MSS (`TCP_MIN_MSS`): a smaller `TCP_MAXSEG` is raised to it.
const TCP_MIN_MSS: u32 = 88;

/// A kernel TCP flow's MSS for the simulator's packets, with the bytes per segment the
/// simulator counts as delivered and the bytes the testbed's receiver counts. The simulator's
/// segment is `segment_size` of payload and `data_header_size()` of headers on the wire (ns-2's
/// 1000 + 40 B); the kernel's is its MSS less the 12-byte timestamp option of payload, and the
/// MSS plus 40 B on the wire. So the MSS is the simulator's wire size less 40 B: each segment
/// then takes the simulator's bytes on the bottleneck (1040 B for 1000-byte packets, where the
/// path's MSS made 1500-byte packets), and the receiver's bytes are scaled by sim / testbed per
/// segment, as TFWC's are (exact for the full segments of a bulk transfer). 004's 1460-byte
/// segments keep the path's MSS. A packet larger than the path's MTU, or one whose MSS Linux
/// would raise, is refused.
pub(super) fn kernel_mss(cfg: &tfcc_core::tcp::TcpConfig) -> Result<(u32, u32, u32), String> {
    let wire = cfg.segment_size.saturating_add(cfg.data_header_size());
    if wire > PATH_MTU {
        return Err(format!(
            "a TCP packet of {} B ({} B of headers) does not fit the testbed path's \
             {PATH_MTU}-byte MTU",
            wire,
            cfg.data_header_size()
        ));
    }
    let mss = wire.saturating_sub(TCP_IPV4_HEADER);
    if mss < TCP_MIN_MSS.max(TCP_TIMESTAMPS + 1) {
        return Err(format!(
            "a TCP packet of {wire} B is below Linux's smallest segment ({} B on the wire)",
            TCP_MIN_MSS + TCP_IPV4_HEADER
        ));
    }
    Ok((mss, cfg.segment_size, mss - TCP_TIMESTAMPS))
}

/// The receivers' bytes as the simulator counts them, for the flows whose datagrams or
/// segments are shorter than the simulator's packets on the wire (`counted`: the flow, the
/// simulator's bytes per packet, the testbed's). TFWC's and WARC's bytes as the simulator
/// counts them (exact: every datagram of theirs is full-size).
pub(super) fn to_simulator_bytes(
    results: Vec<FlowResult>,
    counted: &[(usize, u32, u32)],
    flows: &[FlowSpec],
) -> Vec<FlowResult> {
    results
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            if let Some(&(_, sim, here)) = counted.iter().find(|c| c.0 == i) {
                let scale = |b: u64| b / u64::from(here) * u64::from(sim);
                r.window_bytes = scale(r.window_bytes);
                r.total_bytes = scale(r.total_bytes);
                r.delivered.iter_mut().for_each(|d| *d = scale(*d));
                // A rate scheme's sender states its rate as packets per RTT times its packet
                // size, and CBR's its configured rate, both in the datagram here: in the
                // simulator's bytes they are the same packets per RTT, or per second.
                if matches!(flows[i].kind, FlowKind::Rate { .. } | FlowKind::Cbr(_)) {
                    let k = f64::from(sim) / f64::from(here);
                    for smp in &mut r.sender {
                        smp.rate = smp.rate.map(|x| x * k);
                    }
                }
            }
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's MSS puts the simulator's packet on the wire: its size less 40 B of IPv4
    /// and TCP headers, of which the timestamp option takes 12 B of payload; 004's 1460-byte
    /// segments are the path's own MSS; what does not fit the MTU, or is below Linux's smallest
    /// segment, is refused.
    #[test]
    fn a_kernel_tcp_segment_is_the_simulators_size_on_the_wire() {
        let cfg = |segment_size| tfcc_core::tcp::TcpConfig {
            segment_size,
            ..tfcc_core::tcp::TcpConfig::default()
        };
        assert_eq!(kernel_mss(&cfg(1000)), Ok((1000, 1000, 988)));
        assert_eq!(kernel_mss(&cfg(1460)), Ok((1460, 1460, 1448)));
        let e = kernel_mss(&cfg(1461)).unwrap_err();
        assert!(e.contains("1501 B (40 B of headers) does not fit"), "{e}");
        let e = kernel_mss(&cfg(40)).unwrap_err();
        assert!(e.contains("below Linux's smallest segment (128 B"), "{e}");
    }

    #[test]
    fn tfrc_datagrams_leave_udp_ipv4_headers_to_the_kernel() {
        use tfcc_core::tfrc::TfrcConfig;
        // The datagram is the simulator's wire size less the kernel's 28 B, whatever the
        // header_size: 1488 - 28 with the 004 scenarios' 28, 1032 - 28 with ns-2's 32, and
        // 1460 - 28 with the thesis preset's 0 (a 1460-B datagram, 1488 B on the wire, before).
        let mut cfg = TfrcConfig::thesis();
        cfg.header_size = 28;
        for (c, datagram) in [
            (cfg.clone(), 1460),
            (TfrcConfig::ns2(), 1004),
            (TfrcConfig::thesis(), 1432),
        ] {
            let k = tfrc_on_udp(&c).unwrap();
            assert_eq!((k, c.wire_size() - k), (UDP_IPV4_HEADER, datagram));
        }
        // The smallest packet that holds UDP/IPv4 and tfcc's 44-byte header: 72 B on the wire.
        cfg.packet_size = 44;
        assert_eq!(tfrc_on_udp(&cfg), Ok(28));
        cfg.packet_size = 43;
        assert_eq!(
            tfrc_on_udp(&cfg).unwrap_err(),
            "a TFRC packet of 71 B on the wire cannot carry UDP/IPv4's 28 B and tfcc's 44 B \
             data header (at least 72 B)"
        );
        // Without header bytes the packet_size alone must hold them (it went out padded).
        cfg.header_size = 0;
        cfg.packet_size = 71;
        assert!(tfrc_on_udp(&cfg).is_err());
        cfg.packet_size = 72;
        assert_eq!(tfrc_on_udp(&cfg), Ok(28));
    }

    #[test]
    fn tfwc_packets_keep_the_simulators_wire_size_and_goodput_count() {
        use tfcc_core::tfwc::TfwcConfig;
        // The default: 1000 B on the wire in the simulator, counted whole.
        let (c, sim, here) = tfwc_on_udp(&TfwcConfig::default()).unwrap();
        assert_eq!((c.packet_size, c.header_size), (972, 0));
        assert_eq!(c.packet_size + UDP_IPV4_HEADER, 1000);
        assert_eq!((sim, here), (1000, 972));
        // A header the simulator does not count: the kernel carries 28 B of it.
        let cfg = TfwcConfig {
            header_size: 56,
            ..TfwcConfig::default()
        };
        let (c, sim, here) = tfwc_on_udp(&cfg).unwrap();
        assert_eq!((c.packet_size, c.header_size), (972, 28));
        assert_eq!((sim, here), (944, 944));
        // Too small for UDP/IPv4 and tfcc's header: refused, not sent padded.
        let tiny = TfwcConfig {
            packet_size: 50,
            ..TfwcConfig::default()
        };
        assert!(tfwc_on_udp(&tiny).unwrap_err().contains("at least 56 B"));
    }

    /// A video-fed flow's packets lose UDP/IPv4's 28 B to the kernel; the simulator's packet
    /// must hold them and tfcc's data header.
    #[test]
    fn a_video_packet_leaves_udp_ipv4_headers_to_the_kernel_if_it_holds_tfccs_header() {
        let tfwc = tfcc_core::tfwc::wire::DATA_LEN;
        assert_eq!(kernel_header_bytes(1000, tfwc, "video-fed TFWC"), Ok(28));
        assert_eq!(kernel_header_bytes(56, tfwc, "video-fed TFWC"), Ok(28));
        let e = kernel_header_bytes(55, tfwc, "video-fed TFWC").unwrap_err();
        assert_eq!(
            e,
            "a video-fed TFWC packet of 55 B on the wire cannot carry UDP/IPv4's 28 B and \
             tfcc's 28 B data header (at least 56 B)"
        );
        assert!(
            kernel_header_bytes(71, tfcc_core::tfrc::wire::DATA_LEN, "video-fed TFRC").is_err()
        );
        assert_eq!(
            kernel_header_bytes(72, tfcc_core::tfrc::wire::DATA_LEN, "TFRC"),
            Ok(28)
        );
    }

    #[test]
    fn rate_packets_keep_the_simulators_wire_size_and_goodput_count() {
        use tfcc_core::warc::RateSenderConfig;
        // 003's 1000 B on the wire, counted whole; a TCP ACK's 40 B report is the bare
        // 28-byte header (56 B on the wire).
        let (c, sim, here) = rate_on_udp(&RateSenderConfig::default(), "warc").unwrap();
        assert_eq!((c.packet_size, c.feedback_size), (972, 12));
        assert_eq!((sim, here), (1000, 972));
        // The smallest packet: UDP/IPv4 and the 36-byte data header.
        let at = |n| RateSenderConfig {
            packet_size: n,
            ..RateSenderConfig::default()
        };
        assert_eq!(rate_on_udp(&at(64), "tear").unwrap().0.packet_size, 36);
        let e = rate_on_udp(&at(63), "tfrcp").unwrap_err();
        assert!(
            e.contains("a TFRCP packet of 63 B") && e.ends_with("(at least 64 B)"),
            "{e}"
        );
    }
}
