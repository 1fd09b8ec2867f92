//! Packet capture on the testbed's interfaces (`[trace] pcap = true` with `--backend testbed`):
//! the packets a veth sends, as the kernel hands them to the device, kept as headers.
//!
//! Why in-process `AF_PACKET` rather than tcpdump: the socket is opened, filtered and bound in
//! the router's namespace before the run's clock starts, so a failure (no `CAP_NET_RAW`, no
//! such device) is an error before anything runs, and it is read until the receivers stop, so
//! the capture starts and ends with the run without waiting for a child process to report that
//! it listens or to flush on a signal; the kernel's own receive timestamp (`SO_TIMESTAMPNS`,
//! taken as the packet is handed to the device, after the qdisc) is kept in nanoseconds; the
//! socket's drops are read from the kernel (`PACKET_STATISTICS`) and reported, not guessed;
//! and nothing new is installed. Its cost is one `recvmsg` per packet on an ordinary thread
//! beside the real-time relay (see [`CaptureStats::cpu`]).
//!
//! A classic BPF program on the socket keeps only outgoing packets (`PACKET_OUTGOING`: the
//! device's transmit side; what it receives is the other direction's transmit side on the peer)
//! and cuts each to [`KERNEL_SNAP`] bytes in the kernel, so a full-size packet costs no copy of
//! its payload. The caller's `header_len` then keeps each packet's headers only.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use crate::clock::clock_ns;
use crate::socket::recv_stamped;

/// Bytes of each packet (from its IP header) the kernel copies to the socket: an IPv4 header
/// with options (60) and a TCP header with options (60), or UDP's 8 and tfcc's longest header
/// (a TFWC ACK of 64 runs: 84) after a 20-byte IPv4 header, fit.
pub const KERNEL_SNAP: u32 = 192;

/// The socket's receive buffer: each queued packet is charged its whole buffer (about 2.3 KB
/// for a 1500-byte frame) however little the filter keeps, so 32 MB hold some 14 000 packets,
/// over a second of a 100 Mb/s bottleneck, should the reading thread be held up that long.
const RCVBUF: i32 = 32 << 20;

/// One captured packet: the kernel's timestamp (`CLOCK_REALTIME`, ns), the IP packet's length
/// on the wire (its total-length field) and its first bytes (the caller's header length).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Captured {
    pub realtime_ns: u64,
    pub len: u32,
    pub headers: Vec<u8>,
}

/// What a capture saw, and what it cost.
#[derive(Clone, Debug, Default)]
pub struct CaptureStats {
    /// The packets, in the order the kernel queued them on the socket (its timestamps' order).
    pub packets: Vec<Captured>,
    /// Packets the kernel could not queue on the socket (`tp_drops`): missing from `packets`.
    pub dropped: u64,
    /// Outgoing frames that were not IPv4 (none on the testbed, which has no IPv6 and no ARP).
    pub not_ipv4: u64,
    /// CPU time of the reading thread, in ns.
    pub cpu_ns: u64,
    /// Wall time from the socket's binding to the end of reading, in ns.
    pub wall_ns: u64,
}

impl CaptureStats {
    /// CPU seconds per second of wall time (1.0 = one core).
    pub fn cpu(&self) -> f64 {
        self.cpu_ns as f64 / (self.wall_ns as f64).max(1.0)
    }
}

/// A running capture; [`Capture::stop`] ends it and returns what it saw.
pub struct Capture {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<io::Result<CaptureStats>>>,
}

/// How many bytes of an IPv4 packet to keep (at most what was captured).
pub type HeaderLen = dyn Fn(&[u8]) -> usize + Send;

impl Capture {
    /// Starts capturing what `dev` in network namespace `ns` transmits. Returns once the socket
    /// is bound (every packet the device sends from then on is seen), or with the reason it
    /// could not be opened.
    pub fn start(ns: &str, dev: &str, header_len: Box<HeaderLen>) -> io::Result<Capture> {
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
        let (ns, dev) = (ns.to_string(), dev.to_string());
        let flag = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name(format!("capture-{dev}"))
            .spawn(move || -> io::Result<CaptureStats> {
                let opened = crate::testbed::enter(&ns)
                    .map_err(|e| io::Error::new(e.kind(), format!("namespace {ns}: {e}")))
                    .and_then(|()| open(&dev));
                let sock = match opened {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let e2 = io::Error::new(e.kind(), e.to_string());
                        let _ = ready_tx.send(Err(e));
                        return Err(e2);
                    }
                };
                read_until(&sock, &flag, &*header_len)
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Capture {
                stop,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(e)
            }
            Err(_) => Err(io::Error::other("the capture thread died")),
        }
    }

    /// Reads what is still queued on the socket, then closes it.
    pub fn stop(mut self) -> io::Result<CaptureStats> {
        self.stop.store(true, Ordering::Release);
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the capture thread panicked")),
            None => Err(io::Error::other("capture already stopped")),
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        // An abandoned capture (an interrupted run) ends with its thread's next poll.
        self.stop.store(true, Ordering::Release);
    }
}

/// `SKF_AD_OFF + SKF_AD_PKTTYPE` (linux/filter.h): loads the packet's type, not its bytes.
const SKF_AD_PKTTYPE: u32 = (-0x1000i32 + 4) as u32;
/// `BPF_LD | BPF_W | BPF_ABS` (0x00, 0x00, 0x20), `BPF_JMP | BPF_JEQ | BPF_K` and
/// `BPF_RET | BPF_K` (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_RET_K: u16 = 0x06;

/// Keep outgoing packets, cut to [`KERNEL_SNAP`] bytes; drop everything else in the kernel.
fn filter() -> [libc::sock_filter; 4] {
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    [
        op(BPF_LD_W_ABS, 0, 0, SKF_AD_PKTTYPE),
        op(BPF_JMP_JEQ_K, 0, 1, u32::from(libc::PACKET_OUTGOING)),
        op(BPF_RET_K, 0, 0, KERNEL_SNAP),
        op(BPF_RET_K, 0, 0, 0),
    ]
}

fn check(rc: libc::c_int, what: &str) -> io::Result<()> {
    if rc < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(())
    }
}

fn setsockopt<T>(fd: libc::c_int, level: libc::c_int, opt: libc::c_int, v: &T) -> libc::c_int {
    // SAFETY: `v` is a live value of the size passed.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            (v as *const T).cast(),
            size_of::<T>() as libc::socklen_t,
        )
    }
}

/// A packet socket on `dev` of the calling thread's namespace, filtered, timestamped and bound.
/// It is created with protocol 0 (it receives nothing) and given its protocol at `bind`, after
/// the filter, so no packet of another device or unfiltered reaches it.
fn open(dev: &str) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned at once.
    let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    check(raw, "packet socket (needs CAP_NET_RAW)")?;
    // SAFETY: a fresh fd nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let fd = sock.as_raw_fd();
    let name = CString::new(dev).map_err(io::Error::other)?;
    // SAFETY: a NUL-terminated name.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("device {dev}: {e}")));
    }
    let mut prog = filter();
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    check(
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog),
        "attach the capture filter",
    )?;
    check(
        setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &1i32),
        "SO_TIMESTAMPNS",
    )?;
    // FORCE passes the system's rmem_max, as root; the plain option is the fallback.
    if setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &RCVBUF) < 0 {
        check(
            setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &RCVBUF),
            "SO_RCVBUF",
        )?;
    }
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll of the size passed.
    let rc = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    check(rc, &format!("bind the capture to {dev}"))?;
    // Counters start at the binding: reading them clears them.
    let _ = drops(fd);
    Ok(sock)
}

/// The packets the kernel dropped for this socket since the last call (`PACKET_STATISTICS`
/// resets its counters when read).
fn drops(fd: libc::c_int) -> io::Result<u64> {
    // SAFETY: all-zero is a valid tpacket_stats.
    let mut st: libc::tpacket_stats = unsafe { zeroed() };
    let mut len = size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: `st` and `len` are live and sized.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast(),
            &mut len,
        )
    };
    check(rc, "PACKET_STATISTICS")?;
    Ok(u64::from(st.tp_drops))
}

/// The reading loop: until `stop`, then whatever is still queued.
fn read_until(
    sock: &OwnedFd,
    stop: &AtomicBool,
    header_len: &HeaderLen,
) -> io::Result<CaptureStats> {
    let fd = sock.as_raw_fd();
    let (cpu0, wall0) = (
        clock_ns(libc::CLOCK_THREAD_CPUTIME_ID),
        clock_ns(libc::CLOCK_MONOTONIC),
    );
    let mut st = CaptureStats::default();
    let mut buf = [0u8; KERNEL_SNAP as usize];
    loop {
        let stopping = stop.load(Ordering::Acquire);
        // Drain what is queued; then wait for more, 20 ms at most, so a stop is seen soon.
        while let Some((n, ts, proto)) = recv(fd, &mut buf)? {
            if proto != libc::ETH_P_IP as u16 || n < 20 {
                st.not_ipv4 += 1;
                continue;
            }
            let p = &buf[..n];
            let len = u32::from(u16::from_be_bytes([p[2], p[3]]));
            let keep = header_len(p).min(n);
            st.packets.push(Captured {
                realtime_ns: ts,
                len,
                headers: p[..keep].to_vec(),
            });
        }
        if stopping {
            break;
        }
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, 20) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
    st.dropped = drops(fd)?;
    st.cpu_ns = clock_ns(libc::CLOCK_THREAD_CPUTIME_ID).saturating_sub(cpu0);
    st.wall_ns = clock_ns(libc::CLOCK_MONOTONIC).saturating_sub(wall0);
    Ok(st)
}

/// One queued packet, if any: its captured length, the kernel's timestamp (ns, realtime) and
/// its protocol (host order).
fn recv(fd: libc::c_int, buf: &mut [u8]) -> io::Result<Option<(usize, u64, u16)>> {
    // SAFETY: all-zero is a valid sockaddr_ll.
    let mut addr: libc::sockaddr_ll = unsafe { zeroed() };
    let Some(got) = recv_stamped(fd, buf, &mut addr)? else {
        return Ok(None);
    };
    let Some(ts) = got.stamp else {
        return Err(io::Error::other(
            "a captured packet came without its timestamp",
        ));
    };
    Ok(Some((got.len, ts, u16::from_be(addr.sll_protocol))))
}

/// The system's real-time clock now, in ns: the captures' timestamps are on it.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture that cannot start says why, naming what it could not open, and leaves no
    /// thread behind.
    #[test]
    fn a_capture_in_a_missing_namespace_is_refused_with_its_name() {
        let e = Capture::start("tfcc-no-such-namespace", "rd", Box::new(|p| p.len()))
            .err()
            .expect("a capture in a missing namespace started");
        assert!(
            e.to_string()
                .starts_with("namespace tfcc-no-such-namespace: "),
            "{e}"
        );
    }

    /// The filter keeps outgoing packets at the snap length and nothing else: run by hand as
    /// the kernel's interpreter would, on the packet types of linux/if_packet.h.
    #[test]
    fn the_filter_keeps_outgoing_packets_cut_to_the_snap_length() {
        let prog = filter();
        let run = |pkttype: u32| -> u32 {
            let (mut pc, mut a) = (0usize, 0u32);
            loop {
                let i = prog[pc];
                match i.code {
                    BPF_LD_W_ABS => {
                        assert_eq!(i.k, SKF_AD_PKTTYPE);
                        a = pkttype;
                        pc += 1;
                    }
                    BPF_JMP_JEQ_K => {
                        pc += 1 + usize::from(if a == i.k { i.jt } else { i.jf });
                    }
                    BPF_RET_K => return i.k,
                    c => panic!("unexpected opcode {c:#x}"),
                }
            }
        };
        assert_eq!(run(u32::from(libc::PACKET_OUTGOING)), KERNEL_SNAP);
        for other in [
            libc::PACKET_HOST,
            libc::PACKET_BROADCAST,
            libc::PACKET_MULTICAST,
            libc::PACKET_OTHERHOST,
        ] {
            assert_eq!(run(u32::from(other)), 0);
        }
    }
}
