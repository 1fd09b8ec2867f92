//! Per-flow counts of the data packets that came out of a bottleneck queue, by the measurement
//! window's epoch the relay wrote into their DSCP bits: the other half of a flow's drops at a
//! queue that several flows share.
//!
//! The relay ([`crate::relay`]) writes every data packet of a listed flow into the queue with
//! an epoch in its DSCP field ([`Epoch`]: before the window, in it, after it). A small eBPF
//! program on the ingress of each receiving namespace's veth (`tcx`, Linux 6.6 on) counts the
//! marked packets that arrived there, per flow and epoch. The queues are FIFO and nothing after
//! them reorders or drops (a veth), so once a queue has sent everything it held at the window's
//! end, a flow's in-window packets written less those counted here are exactly its drops at
//! the queue in the window, whatever its protocol: kernel TCP, whose receiver keeps no ledger
//! of sequence numbers, as well as tfcc's flows.
//!
//! Why eBPF and not `tc`: this kernel has the u32 classifier but no action that counts (no
//! `gact`, no `CONFIG_CLS_U32_PERF`), and no nftables tool is installed; the program is loaded
//! with the `bpf(2)` system call alone, so the testbed needs no compiler or other tool for it.
//! Its 40-odd instructions are assembled here ([`program`]).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A packet's place relative to the measurement window, as the relay marks it in the IPv4
/// DSCP field. The three codes are in RFC 2474's pool 2 (`xxxx11`, for experimental or local
/// use), so they name no standard per-hop behaviour; nothing on the testbed's path looks at
/// DSCP (tbf and pfifo do not classify, and Linux TCP does not reflect a received TOS unless
/// `net.ipv4.tcp_reflect_tos` is set, which is 0 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Epoch {
    Before = 0,
    In = 1,
    After = 2,
}

impl Epoch {
    pub const ALL: [Epoch; 3] = [Epoch::Before, Epoch::In, Epoch::After];

    /// The DSCP code point: 3, 7 and 11.
    pub fn dscp(self) -> u8 {
        ((self as u8) << 2) | 0b11
    }

    /// The epoch a DSCP code point marks, if any.
    pub fn of_dscp(dscp: u8) -> Option<Epoch> {
        (dscp & 0b11 == 0b11)
            .then(|| Epoch::ALL.get(usize::from(dscp >> 2)).copied())
            .flatten()
    }
}

/// Sets the DSCP of an IPv4 packet to `dscp`, keeping its two ECN bits, and rewrites the
/// header checksum (the router's `ip_rcv` drops a packet whose checksum is wrong). `false`, and
/// the packet untouched, if it is not IPv4 or its header is cut short.
pub fn set_dscp(pkt: &mut [u8], dscp: u8) -> bool {
    let Some(&first) = pkt.first() else {
        return false;
    };
    let ihl = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || ihl < 20 || pkt.len() < ihl {
        return false;
    }
    pkt[1] = (dscp << 2) | (pkt[1] & 0b11);
    pkt[10] = 0;
    pkt[11] = 0;
    let sum = header_checksum(&pkt[..ihl]);
    pkt[10..12].copy_from_slice(&sum.to_be_bytes());
    true
}

/// The Internet checksum (RFC 1071) of an IPv4 header whose checksum field is zero, or 0 of
/// one whose field holds a correct checksum.
pub fn header_checksum(header: &[u8]) -> u16 {
    let mut sum: u32 = header
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Arrivals of marked packets, per flow and [`Epoch`], at the receiving namespaces' veths.
/// Dropping it detaches the program (its links close with it).
#[derive(Debug)]
pub struct ArrivalCounter {
    map: OwnedFd,
    _prog: OwnedFd,
    _links: Vec<OwnedFd>,
    flows: u32,
}

/// The flows' ports are `base_port .. base_port + flows` (the testbed's `flow_port`).
impl ArrivalCounter {
    /// Loads the counting program for `flows` flows whose receivers listen on `base_port`
    /// onwards, attached to the ingress of each `(namespace, device)` of `at`.
    pub fn attach(base_port: u16, flows: u32, at: &[(String, String)]) -> io::Result<Self> {
        let map = map_create(flows.max(1) * 3)?;
        let prog = prog_load(&program(map.as_raw_fd(), base_port, flows))?;
        let mut links = Vec::new();
        for (ns, dev) in at {
            let (ns, dev, fd) = (ns.clone(), dev.clone(), prog.as_raw_fd());
            // The device's index is resolved in the calling thread's namespace.
            let link = std::thread::spawn(move || -> io::Result<OwnedFd> {
                crate::testbed::enter(&ns)?;
                let name = std::ffi::CString::new(dev.clone()).map_err(io::Error::other)?;
                // SAFETY: a NUL-terminated interface name.
                let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
                if ifindex == 0 {
                    return Err(io::Error::other(format!("no device {dev} in {ns}")));
                }
                link_create(fd, ifindex)
            })
            .join()
            .map_err(|_| io::Error::other("arrival counter thread panicked"))??;
            links.push(link);
        }
        Ok(ArrivalCounter {
            map,
            _prog: prog,
            _links: links,
            flows,
        })
    }

    /// Each flow's arrivals so far, by [`Epoch`] (indexed by `Epoch as usize`).
    pub fn read(&self) -> io::Result<Vec<[u64; 3]>> {
        (0..self.flows)
            .map(|i| {
                let mut v = [0u64; 3];
                for e in Epoch::ALL {
                    v[e as usize] = map_lookup(self.map.as_raw_fd(), i * 3 + e as u32)?;
                }
                Ok(v)
            })
            .collect()
    }
}

// bpf(2) commands, map and program types, attach types (linux/bpf.h).
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
const BPF_PROG_TYPE_SCHED_CLS: u32 = 3;
const BPF_TCX_INGRESS: u32 = 46;

/// `union bpf_attr`, as bytes: each command reads its own prefix of it, and the kernel wants
/// whatever it does not know to be zero.
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32(mut self, off: usize, v: u32) -> Attr {
        self.0[off..off + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(mut self, off: usize, v: u64) -> Attr {
        self.0[off..off + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
}

fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a zero-padded bpf_attr of the size given.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.0.as_mut_ptr(), attr.0.len()) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: a descriptor bpf(2) just returned, owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
}

/// An array of `entries` u64 counters keyed by u32.
fn map_create(entries: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new()
        .u32(0, BPF_MAP_TYPE_ARRAY)
        .u32(4, 4)
        .u32(8, 8)
        .u32(12, entries);
    bpf(BPF_MAP_CREATE, &mut a).map(owned)
}

fn map_lookup(map: RawFd, key: u32) -> io::Result<u64> {
    let mut value = 0u64;
    let mut a = Attr::new()
        .u32(0, map as u32)
        .u64(8, &key as *const u32 as u64)
        .u64(16, &mut value as *mut u64 as u64);
    bpf(BPF_MAP_LOOKUP_ELEM, &mut a)?;
    Ok(value)
}

fn prog_load(insns: &[u64]) -> io::Result<OwnedFd> {
    let license = c"MIT OR Apache-2.0";
    let mut log = vec![0u8; 64 * 1024];
    let mut a = Attr::new()
        .u32(0, BPF_PROG_TYPE_SCHED_CLS)
        .u32(4, insns.len() as u32)
        .u64(8, insns.as_ptr() as u64)
        .u64(16, license.as_ptr() as u64)
        .u32(24, 1)
        .u32(28, log.len() as u32)
        .u64(32, log.as_mut_ptr() as u64);
    bpf(BPF_PROG_LOAD, &mut a).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        io::Error::new(
            e.kind(),
            format!(
                "loading the arrival counter: {e}: {}",
                String::from_utf8_lossy(&log[..end]).trim()
            ),
        )
    })
}

fn link_create(prog: RawFd, ifindex: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new()
        .u32(0, prog as u32)
        .u32(4, ifindex)
        .u32(8, BPF_TCX_INGRESS);
    bpf(BPF_LINK_CREATE, &mut a).map(owned)
}

/// One eBPF instruction (linux/bpf.h `struct bpf_insn`) as the kernel reads it: opcode,
/// destination and source register, 16-bit offset, 32-bit immediate, little-endian.
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    u64::from(code)
        | u64::from(dst & 0xf) << 8
        | u64::from(src & 0xf) << 12
        | u64::from(off as u16) << 16
        | u64::from(imm as u32) << 32
}

// Opcodes used (class | size/source | operation).
const LDXW: u8 = 0x61;
const LDXH: u8 = 0x69;
const LDXB: u8 = 0x71;
const STXW: u8 = 0x63;
const ATOMIC_ADD_DW: u8 = 0xdb;
const MOV_K: u8 = 0xb7;
const MOV_X: u8 = 0xbf;
const ADD_K: u8 = 0x07;
const ADD_X: u8 = 0x0f;
const SUB_K: u8 = 0x17;
const MUL_K: u8 = 0x27;
const OR_X: u8 = 0x4f;
const AND_K: u8 = 0x57;
const LSH_K: u8 = 0x67;
const RSH_K: u8 = 0x77;
const JGT_X: u8 = 0x2d;
const JNE_K: u8 = 0x55;
const JEQ_K: u8 = 0x15;
const JGT_K: u8 = 0x25;
const JGE_K: u8 = 0x35;
const JLT_K: u8 = 0xa5;
const LD_IMM64: u8 = 0x18;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const PSEUDO_MAP_FD: u8 = 1;
const MAP_LOOKUP_ELEM: i32 = 1;

/// The counting program: for an Ethernet frame carrying an IPv4 TCP or UDP packet (its first
/// fragment) whose DSCP is an [`Epoch`] and whose destination port is a flow's, adds one to
/// that flow's counter of that epoch; every packet passes on (`TC_ACT_OK`). Only data is
/// counted: a flow is known by its receiver's port, the destination of its data and the
/// source of its feedback (the senders' ports are ephemeral, above any flow port), and the
/// relay marks data alone.
pub fn program(map: RawFd, base_port: u16, flows: u32) -> Vec<u64> {
    let mut p: Vec<u64> = Vec::new();
    // Jumps to the end, patched once its place is known.
    let mut to_out: Vec<usize> = Vec::new();
    let mut jump_out = |p: &mut Vec<u64>, code: u8, dst: u8, src: u8, imm: i32| {
        to_out.push(p.len());
        p.push(insn(code, dst, src, 0, imm));
    };
    // r2 = data, r3 = data_end (struct __sk_buff); tcx ingress starts at the MAC header.
    p.push(insn(LDXW, 2, 1, 76, 0));
    p.push(insn(LDXW, 3, 1, 80, 0));
    p.push(insn(MOV_X, 4, 2, 0, 0));
    p.push(insn(ADD_K, 4, 0, 0, 14 + 20));
    jump_out(&mut p, JGT_X, 4, 3, 0);
    // EtherType IPv4 (0x0800, read little-endian).
    p.push(insn(LDXH, 5, 2, 12, 0));
    jump_out(&mut p, JNE_K, 5, 0, 0x0008);
    // Version 4; r5 = header length in bytes, at least 20.
    p.push(insn(LDXB, 5, 2, 14, 0));
    p.push(insn(MOV_X, 6, 5, 0, 0));
    p.push(insn(RSH_K, 6, 0, 0, 4));
    jump_out(&mut p, JNE_K, 6, 0, 4);
    p.push(insn(AND_K, 5, 0, 0, 0x0f));
    p.push(insn(LSH_K, 5, 0, 0, 2));
    jump_out(&mut p, JLT_K, 5, 0, 20);
    // r6 = the epoch: DSCP xxxx11, its upper four bits 0, 1 or 2.
    p.push(insn(LDXB, 6, 2, 15, 0));
    p.push(insn(RSH_K, 6, 0, 0, 2));
    p.push(insn(MOV_X, 7, 6, 0, 0));
    p.push(insn(AND_K, 7, 0, 0, 0b11));
    jump_out(&mut p, JNE_K, 7, 0, 0b11);
    p.push(insn(RSH_K, 6, 0, 0, 2));
    jump_out(&mut p, JGT_K, 6, 0, 2);
    // TCP or UDP, and no later fragment (offset 0).
    p.push(insn(LDXB, 7, 2, 23, 0));
    p.push(insn(JEQ_K, 7, 0, 1, 6));
    jump_out(&mut p, JNE_K, 7, 0, 17);
    p.push(insn(LDXB, 7, 2, 20, 0));
    p.push(insn(AND_K, 7, 0, 0, 0x1f));
    jump_out(&mut p, JNE_K, 7, 0, 0);
    p.push(insn(LDXB, 7, 2, 21, 0));
    jump_out(&mut p, JNE_K, 7, 0, 0);
    // r4 = the transport header, its ports within the frame.
    p.push(insn(MOV_X, 4, 2, 0, 0));
    p.push(insn(ADD_K, 4, 0, 0, 14));
    p.push(insn(ADD_X, 4, 5, 0, 0));
    p.push(insn(MOV_X, 8, 4, 0, 0));
    p.push(insn(ADD_K, 8, 0, 0, 4));
    jump_out(&mut p, JGT_X, 8, 3, 0);
    // r7 = destination port - base: the flow's index, below `flows`.
    p.push(insn(LDXB, 7, 4, 2, 0));
    p.push(insn(LSH_K, 7, 0, 0, 8));
    p.push(insn(LDXB, 8, 4, 3, 0));
    p.push(insn(OR_X, 7, 8, 0, 0));
    p.push(insn(SUB_K, 7, 0, 0, i32::from(base_port)));
    jump_out(&mut p, JGE_K, 7, 0, flows as i32);
    // key = flow · 3 + epoch, on the stack; counter += 1.
    p.push(insn(MUL_K, 7, 0, 0, 3));
    p.push(insn(ADD_X, 7, 6, 0, 0));
    p.push(insn(STXW, 10, 7, -4, 0));
    p.push(insn(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map));
    p.push(insn(0, 0, 0, 0, 0));
    p.push(insn(MOV_X, 2, 10, 0, 0));
    p.push(insn(ADD_K, 2, 0, 0, -4));
    p.push(insn(CALL, 0, 0, 0, MAP_LOOKUP_ELEM));
    jump_out(&mut p, JEQ_K, 0, 0, 0);
    p.push(insn(MOV_K, 1, 0, 0, 1));
    p.push(insn(ATOMIC_ADD_DW, 0, 1, 0, 0));
    // out: TC_ACT_OK.
    let out = p.len();
    p.push(insn(MOV_K, 0, 0, 0, 0));
    p.push(insn(EXIT, 0, 0, 0, 0));
    for k in to_out {
        let off = (out - k - 1) as u64;
        p[k] |= (off & 0xffff) << 16;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_are_pool_2_code_points_and_read_back() {
        let codes: Vec<u8> = Epoch::ALL.iter().map(|e| e.dscp()).collect();
        assert_eq!(codes, [3, 7, 11]);
        for e in Epoch::ALL {
            assert_eq!(Epoch::of_dscp(e.dscp()), Some(e));
        }
        // Unmarked traffic (0), the standard classes (EF 46, CS1 8) and pool 2 past the
        // three are no epoch.
        for d in [0, 8, 46, 15, 63] {
            assert_eq!(Epoch::of_dscp(d), None, "{d}");
        }
    }

    /// A UDP packet's IPv4 header whose checksum field, 0xb861, is right (it sums to 0).
    #[test]
    fn the_dscp_is_set_with_the_ecn_bits_kept_and_the_checksum_right() {
        let mut h: Vec<u8> = vec![
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(header_checksum(&h), 0, "a correct header sums to 0");
        h[1] = 0b10; // ECT(0)
        assert!(set_dscp(&mut h, Epoch::In.dscp()));
        assert_eq!(h[1], (7 << 2) | 0b10);
        assert_eq!(header_checksum(&h), 0);
        // The same as the checksum computed from scratch over the new header.
        let mut z = h.clone();
        z[10] = 0;
        z[11] = 0;
        assert_eq!(header_checksum(&z).to_be_bytes(), [h[10], h[11]]);
        // With options (IHL 6) the whole header is summed.
        let mut o = h.clone();
        o[0] = 0x46;
        o.extend_from_slice(&[1, 1, 1, 0]);
        assert!(set_dscp(&mut o, Epoch::After.dscp()));
        assert_eq!(header_checksum(&o[..24]), 0);
        // Not IPv4, or cut short: untouched.
        let mut v6 = vec![0x60; 40];
        assert!(!set_dscp(&mut v6, 7));
        assert_eq!(v6, vec![0x60; 40]);
        assert!(!set_dscp(&mut h.clone()[..12], 7));
        assert!(!set_dscp(&mut [], 7));
    }

    #[test]
    fn every_jump_of_the_program_lands_inside_it() {
        let p = program(3, 5001, 4);
        let last = p.len() as i64 - 1;
        assert_eq!(p[p.len() - 1] & 0xff, u64::from(EXIT));
        for (k, &i) in p.iter().enumerate() {
            let code = (i & 0xff) as u8;
            if code & 0x07 == 0x05 && code != CALL && code != EXIT {
                let off = i64::from((i >> 16) as u16 as i16);
                let to = k as i64 + 1 + off;
                assert!(off >= 0 && to <= last, "insn {k} jumps to {to}");
            }
        }
        // The map's descriptor sits in the double-word load.
        let ld = p
            .iter()
            .position(|&i| i & 0xff == u64::from(LD_IMM64))
            .unwrap();
        assert_eq!((p[ld] >> 32) as u32, 3);
        assert_eq!((p[ld] >> 12) & 0xf, u64::from(PSEUDO_MAP_FD));
    }

    /// An Ethernet frame with an IPv4 packet of `proto` to `dport`, DSCP `dscp` with ECN
    /// bits set, fragment offset `frag`.
    fn frame(proto: u8, dscp: u8, dport: u16, frag: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 20];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&40u16.to_be_bytes());
        f[20..22].copy_from_slice(&frag.to_be_bytes());
        f[22] = 64;
        f[23] = proto;
        f[26..30].copy_from_slice(&[10, 78, 1, 1]);
        f[30..34].copy_from_slice(&[10, 78, 2, 1]);
        assert!(set_dscp(&mut f[14..], dscp));
        f[15] |= 0b01;
        f[34..36].copy_from_slice(&40000u16.to_be_bytes());
        f[36..38].copy_from_slice(&dport.to_be_bytes());
        f
    }

    /// The kernel's verifier takes the program, and run on crafted frames
    /// (`BPF_PROG_TEST_RUN`) it counts marked data of the flows' ports only. Root only.
    #[test]
    fn the_program_counts_marked_data_of_the_flows_ports_only() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: not root");
            return;
        }
        let map = map_create(2 * 3).unwrap();
        let prog = prog_load(&program(map.as_raw_fd(), 5001, 2)).unwrap();
        let run = |f: &[u8]| {
            let mut a = Attr::new()
                .u32(0, prog.as_raw_fd() as u32)
                .u32(8, f.len() as u32)
                .u64(16, f.as_ptr() as u64)
                .u32(32, 1);
            bpf(10, &mut a).unwrap();
            // Every packet passes (TC_ACT_OK).
            assert_eq!(u32::from_ne_bytes(a.0[4..8].try_into().unwrap()), 0);
        };
        let (before, inw, after) = (Epoch::Before.dscp(), Epoch::In.dscp(), Epoch::After.dscp());
        run(&frame(6, inw, 5002, 0x4000)); // TCP data of flow 1 in the window (DF set)
        run(&frame(17, inw, 5002, 0)); // UDP data of flow 1
        run(&frame(17, before, 5001, 0)); // flow 0, before
        run(&frame(6, after, 5001, 0)); // flow 0, after
        run(&frame(6, 0, 5001, 0)); // unmarked (feedback is never marked)
        run(&frame(6, 46, 5001, 0)); // another code point
        run(&frame(6, inw, 5003, 0)); // no flow's port
        run(&frame(6, inw, 5000, 0)); // below the first
        run(&frame(1, inw, 5001, 0)); // ICMP
        run(&frame(17, inw, 5001, 0x0003)); // a later fragment: no ports
        let mut short = frame(6, inw, 5001, 0);
        short.truncate(36); // ports cut off
        run(&short);
        let mut v6 = frame(6, inw, 5001, 0);
        v6[12..14].copy_from_slice(&[0x86, 0xdd]);
        run(&v6);
        let got: Vec<u64> = (0..6)
            .map(|k| map_lookup(map.as_raw_fd(), k).unwrap())
            .collect();
        // flow 0: before 1, in 0, after 1; flow 1: in 2.
        assert_eq!(got, [1, 0, 1, 0, 2, 0]);
    }
}
