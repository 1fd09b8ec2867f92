//! A non-blocking UDP socket with kernel receive timestamps and nanosecond waits.
//!
//! std's `UdpSocket` sends; receiving goes through `recvmsg(2)` so that the `SCM_TIMESTAMPNS`
//! control message (the time the kernel took the datagram off the wire, `SO_TIMESTAMPNS` in
//! socket(7)) comes with each datagram: the protocol's RTT and receive-rate samples then do not
//! include the time the session spent pacing or sleeping before it read the socket. Waiting is
//! `ppoll(2)` with a nanosecond timeout; the thread's timer slack is set to 1 ns
//! (`PR_SET_TIMERSLACK`, default 50 µs) so that the kernel does not defer the wake-up.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{
    Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, ToSocketAddrs, UdpSocket,
};
use std::os::fd::AsRawFd;

use crate::clock::timespec_ns;

/// One received datagram's metadata.
#[derive(Clone, Copy, Debug)]
pub struct Received {
    /// Bytes written into the buffer (the datagram is cut there if it was longer).
    pub len: usize,
    /// The datagram was longer than the buffer.
    pub truncated: bool,
    /// Sender address.
    pub from: SocketAddr,
    /// Kernel receive stamp, `CLOCK_REALTIME` nanoseconds; `None` if the kernel attached none.
    pub stamp: Option<u64>,
}

/// What a wait ended on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    /// The socket has a datagram to read.
    Readable,
    /// The timeout passed.
    Timeout,
}

/// The transport's socket.
#[derive(Debug)]
pub struct Socket {
    sock: UdpSocket,
}

fn setsockopt_int(fd: i32, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: a valid int option of the size given.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const i32).cast(),
            size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Socket {
    /// Binds `addr`, non-blocking, with receive timestamps on and the given kernel buffer sizes
    /// (0 keeps the system default). Also sets this thread's timer slack to 1 ns.
    pub fn bind(addr: impl ToSocketAddrs, rcvbuf: usize, sndbuf: usize) -> io::Result<Socket> {
        let sock = UdpSocket::bind(addr)?;
        sock.set_nonblocking(true)?;
        let fd = sock.as_raw_fd();
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        for (opt, v) in [(libc::SO_RCVBUF, rcvbuf), (libc::SO_SNDBUF, sndbuf)] {
            if v > 0 {
                setsockopt_int(
                    fd,
                    libc::SOL_SOCKET,
                    opt,
                    i32::try_from(v).unwrap_or(i32::MAX),
                )?;
            }
        }
        // SAFETY: prctl with integer arguments only; failure leaves the default slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
        }
        Ok(Socket { sock })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.sock.local_addr()
    }

    /// Sends one datagram; `WouldBlock` when the socket buffer is full.
    pub fn send_to(&self, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.sock.send_to(buf, to)
    }

    /// Reads one datagram if one is queued (`Ok(None)` if not).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        // SAFETY: all-zero is a valid sockaddr_storage.
        let mut addr: libc::sockaddr_storage = unsafe { zeroed() };
        let Some(got) = recv_stamped(self.sock.as_raw_fd(), buf, &mut addr)? else {
            return Ok(None);
        };
        let Some(from) = sockaddr_to_std(&addr) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "unknown address family",
            ));
        };
        Ok(Some(Received {
            len: got.len,
            truncated: got.truncated,
            from,
            stamp: got.stamp,
        }))
    }

    /// Waits up to `timeout_ns` for a datagram. Signals (EINTR) end the wait early as a timeout;
    /// callers re-check the clock.
    pub fn wait(&self, timeout_ns: u64) -> io::Result<Woke> {
        let mut pfd = libc::pollfd {
            fd: self.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ts = libc::timespec {
            tv_sec: i64::try_from(timeout_ns / 1_000_000_000).unwrap_or(i64::MAX) as _,
            tv_nsec: (timeout_ns % 1_000_000_000) as _,
        };
        // SAFETY: one valid pollfd and a valid timespec; no signal mask change.
        let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(Woke::Timeout);
            }
            return Err(e);
        }
        Ok(if rc > 0 {
            Woke::Readable
        } else {
            Woke::Timeout
        })
    }
}

/// Puts the calling thread under `SCHED_FIFO` at `prio`.
pub fn set_realtime(prio: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: pid 0 is the calling thread; `param` is valid.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// What [`recv_stamped`] read: the bytes in the buffer, whether the kernel cut the message to
/// fit, and its receive timestamp.
pub(crate) struct Stamped {
    pub len: usize,
    pub truncated: bool,
    /// The kernel's receive timestamp (ns on CLOCK_REALTIME, `SO_TIMESTAMPNS`), if it sent one.
    pub stamp: Option<u64>,
}

/// One non-blocking `recvmsg` on `fd` into `buf`, the sender's address into `addr` (the
/// socket family's sockaddr type) and the kernel's receive timestamp from the control data:
/// the UDP socket's datagrams and the testbed capture's frames are read the same way.
/// `Ok(None)` when nothing is queued.
pub(crate) fn recv_stamped<A>(
    fd: libc::c_int,
    buf: &mut [u8],
    addr: &mut A,
) -> io::Result<Option<Stamped>> {
    // u64 elements keep the control buffer aligned for cmsghdr.
    let mut control = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: all-zero is a valid msghdr.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = (addr as *mut A).cast();
    msg.msg_namelen = size_of::<A>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of::<[u64; 16]>() as _;
    let n = loop {
        // SAFETY: every pointer in `msg` refers to a live buffer of the stated length.
        let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
        if n >= 0 {
            break n;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted => continue,
            _ => return Err(e),
        }
    };
    let mut stamp = None;
    // SAFETY: the CMSG_* macros walk the control buffer the kernel filled, bounded by
    // msg_controllen; the timespec is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec =
                    std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                stamp = Some(timespec_ns(&ts));
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok(Some(Stamped {
        len: usize::try_from(n).unwrap_or(0).min(buf.len()),
        truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
        stamp,
    }))
}

fn sockaddr_to_std(a: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(a.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says this storage holds a sockaddr_in.
            let v4: libc::sockaddr_in =
                unsafe { std::ptr::read_unaligned((a as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr)),
                u16::from_be(v4.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this storage holds a sockaddr_in6.
            let v6: libc::sockaddr_in6 =
                unsafe { std::ptr::read_unaligned((a as *const libc::sockaddr_storage).cast()) };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(v6.sin6_addr.s6_addr),
                u16::from_be(v6.sin6_port),
                v6.sin6_flowinfo,
                v6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_arrive_with_a_kernel_stamp_and_their_source() {
        let a = Socket::bind("127.0.0.1:0", 0, 0).unwrap();
        let b = Socket::bind("127.0.0.1:0", 0, 0).unwrap();
        let mut buf = [0u8; 64];
        assert!(b.recv(&mut buf).unwrap().is_none());
        a.send_to(b"hello", b.local_addr().unwrap()).unwrap();
        assert_eq!(b.wait(1_000_000_000).unwrap(), Woke::Readable);
        let r = b.recv(&mut buf).unwrap().unwrap();
        assert_eq!(&buf[..r.len], b"hello");
        assert_eq!(r.from, a.local_addr().unwrap());
        assert!(!r.truncated);
        let now = crate::clock::clock_ns(libc::CLOCK_REALTIME);
        let stamp = r.stamp.expect("SO_TIMESTAMPNS stamp");
        assert!(stamp <= now && now - stamp < 1_000_000_000);
        // A datagram longer than the buffer is cut and flagged.
        a.send_to(&[7u8; 100], b.local_addr().unwrap()).unwrap();
        b.wait(1_000_000_000).unwrap();
        let r = b.recv(&mut buf).unwrap().unwrap();
        assert!(r.truncated);
        assert_eq!(r.len, 64);
        assert_eq!(b.wait(1_000_000).unwrap(), Woke::Timeout);
    }
}
