//! Sessions over the loopback interface: pacing accuracy, a TFRC flow, and junk datagrams.

use std::net::{SocketAddr, UdpSocket};
use std::sync::{mpsc, Mutex};
use std::thread;

use tfcc_core::endpoint::Endpoint;
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::{Dur, Rate, Time};
use tfcc_net::{Counters, DropReason, Protocol, Session, SessionConfig};
use tfcc_sim::flow::CbrSink;
use tfcc_sim::CbrConfig;

/// One test at a time: the TFRC test saturates a core, which would skew the pacing test's
/// numbers on a 2-core machine.
static SERIAL: Mutex<()> = Mutex::new(());

/// What a receiver session ends with: bytes delivered, counters, the first datagram dropped.
type Received = (u64, Counters, Option<(SocketAddr, DropReason)>);

/// Runs a receiver session for `secs` in a thread; sends its address back first.
fn spawn_receiver<R, F>(
    make: F,
    proto: Protocol,
    secs: u64,
) -> (SocketAddr, thread::JoinHandle<Received>)
where
    R: tfcc_core::endpoint::Receiver + 'static,
    F: FnOnce() -> R + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let mut s =
            Session::receiver(make(), proto, "127.0.0.1:0", SessionConfig::default()).unwrap();
        tx.send(s.local_addr().unwrap()).unwrap();
        s.run_until(Time::from_secs(secs)).unwrap();
        (s.delivered_bytes(), s.counters(), s.first_drop())
    });
    (rx.recv().unwrap(), h)
}

/// A TFRC receiver session (default configuration) running for `secs` in a thread.
fn spawn_tfrc_receiver(secs: u64) -> (SocketAddr, thread::JoinHandle<Received>) {
    spawn_receiver(
        || TfrcReceiver::new(TfrcConfig::default()),
        Protocol::Tfrc,
        secs,
    )
}

/// A TFRC sender session (default configuration) on an ephemeral loopback port, sending to `to`.
fn tfrc_sender(to: SocketAddr) -> Session<TfrcSender> {
    Session::sender(
        TfrcSender::new(TfrcConfig::default()),
        Protocol::Tfrc,
        "127.0.0.1:0",
        to,
        SessionConfig::default(),
    )
    .unwrap()
}

/// CPU time the hypervisor took from this VM so far (the `steal` column of `/proc/stat`'s `cpu`
/// line, all CPUs), or `None` where the kernel does not report it.
fn stolen() -> Option<Dur> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: u64 = stat
        .lines()
        .next()?
        .split_whitespace()
        .nth(8)?
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the C library and has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| Dur::from_millis(ticks * 1000 / hz as u64))
}

/// One 2-s CBR run over loopback at 10 Mb/s (1000-byte datagrams, one every 800 µs), checked for
/// completeness; returns the pacing lateness and gap-error summaries and whether both 99th
/// percentiles are under a millisecond.
fn cbr_pacing_run() -> (String, String, bool, bool) {
    let (addr, rx) = spawn_receiver(CbrSink::new, Protocol::Raw, 3);
    let cfg = CbrConfig {
        rate: Rate::from_bps(10_000_000),
        packet_size: 1000,
        on_off: None,
    };
    let src =
        tfcc_sim::flow::CbrSender::new(cfg, Time::from_millis(10), Some(Time::from_millis(2010)));
    // SCHED_FIFO when allowed (root): the machine is shared and normal priority measures the
    // neighbours' load, not the transport.
    let rt = SessionConfig {
        realtime: Some(10),
        ..SessionConfig::default()
    };
    let cfg = match Session::sender(
        tfcc_sim::flow::CbrSender::new(
            CbrConfig {
                rate: Rate(1),
                packet_size: 1,
                on_off: None,
            },
            Time::MAX,
            None,
        ),
        Protocol::Raw,
        "127.0.0.1:0",
        addr,
        rt.clone(),
    ) {
        Ok(_) => rt,
        Err(e) => {
            eprintln!("no SCHED_FIFO ({e}): pacing measured at normal priority");
            SessionConfig::default()
        }
    };
    let mut s = Session::sender(src, Protocol::Raw, "127.0.0.1:0", addr, cfg).unwrap();
    s.run_until(Time::from_millis(2100)).unwrap();
    let late = s.lateness();
    let gap = s.gap_error();
    let (delivered, rc, _) = rx.join().unwrap();
    assert_eq!(s.counters().sent, 2500);
    assert_eq!(late.count(), 2500);
    assert_eq!(rc.received, 2500, "{rc:?}");
    assert_eq!(delivered, 2_500_000);
    assert_eq!(rc.malformed + rc.unexpected + rc.unstamped, 0, "{rc:?}");
    // Sub-millisecond pacing: the median lateness is microseconds.
    assert!(
        late.quantile(0.5) < Dur::from_micros(100),
        "{}",
        late.summary()
    );
    // Issue 11's measure: the error of the 2499 inter-packet gaps.
    assert_eq!(gap.magnitude().count(), 2499);
    (
        late.summary(),
        gap.summary(),
        late.quantile(0.99) < Dur::from_millis(1),
        gap.magnitude().quantile(0.99) < Dur::from_millis(1),
    )
}

#[test]
fn cbr_pacing_gaps_are_accurate_to_well_under_a_millisecond() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The 99th percentiles stay below a millisecond even on a shared 2-core VM, unless the
    // hypervisor takes the CPU away: one stall of ~25 ms makes ~30 of the 2500 packets late
    // (seen once in CI, SCHED_FIFO or not). A run during which `/proc/stat` counts stolen time
    // is repeated; a run without steal must pass. The last run must pass too unless the
    // hypervisor took at least HEAVY of it, when it measured the host, not the pacing: on
    // 2026-11-28 three runs in a row lost 1.63 s, 1.50 s and 0.79 s of CPU to steal (of about
    // 2.1 s each), p99 lateness 4.7-8.0 ms, and failed a fresh-clone CI; the same code passes
    // on a quiet host with microsecond medians. Such a test run says so and passes.
    const RUNS: usize = 5;
    const HEAVY: Dur = Dur::from_millis(100);
    for run in 1..=RUNS {
        let before = stolen();
        let (late, gap, late_ok, gap_ok) = cbr_pacing_run();
        let steal = stolen().zip(before).map(|(a, b)| a - b);
        eprintln!("cbr 10 Mb/s pacing lateness: {late}");
        eprintln!("cbr 10 Mb/s pacing gap error: {gap}");
        eprintln!("stolen by the hypervisor during the run: {steal:?}");
        if late_ok && gap_ok {
            return;
        }
        let stole = steal.is_some_and(|d| d > Dur::ZERO);
        let heavy = steal.is_some_and(|d| d >= HEAVY);
        let why = format!(
            "run {run}: pacing 99th percentile not under 1 ms (lateness {late}; gap error \
             {gap}; stolen {steal:?})"
        );
        assert!(stole, "{why}");
        if run == RUNS {
            assert!(heavy, "{why}");
            eprintln!(
                "inconclusive: the hypervisor stole at least {HEAVY:?} of every one of {RUNS} \
                 runs, so none measured the pacing"
            );
            return;
        }
        eprintln!("run {run}: the hypervisor stole CPU time during the run; repeating it");
    }
}

#[test]
fn a_tfrc_flow_over_loopback_gets_feedback_and_delivers_payload() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (addr, rx) = spawn_tfrc_receiver(4);
    let mut s = tfrc_sender(addr);
    let mut n = 0u8;
    s.on_fill(move |p| {
        n = n.wrapping_add(1);
        p.fill(n);
    });
    s.run_until(Time::from_secs(3)).unwrap();
    let st = s.endpoint().stats();
    let sent = s.counters();
    eprintln!(
        "tfrc loopback 3 s: {sent:?}, sender {st:?}, lateness {}",
        s.lateness().summary()
    );
    let (delivered, rc, _) = rx.join().unwrap();
    eprintln!("receiver: delivered {delivered} B, {rc:?}");
    assert!(
        s.endpoint().feedbacks() > 10,
        "feedbacks {}",
        s.endpoint().feedbacks()
    );
    // The RTT comes from echoed timestamps: sub-millisecond idle, but an unshaped TFRC climbs
    // until the CPU is the bottleneck and the receive buffer (4 MiB, ~30 ms at 1 Gb/s) fills,
    // so only its order of magnitude is checked.
    assert!(st.rtt.is_some_and(|r| r < Dur::from_millis(200)), "{st:?}");
    // Slowstart from one packet per RTT over a sub-millisecond RTT: far past the 1 pkt/s of
    // Init RTT within 3 s.
    assert!(sent.sent > 1000, "{sent:?}");
    assert_eq!(sent.received, s.endpoint().feedbacks());
    assert_eq!(
        rc.malformed + rc.unexpected + sent.malformed + sent.unexpected,
        0
    );
    assert!(delivered > 1_000_000, "delivered {delivered}");
    assert!(rc.received <= sent.sent);
}

#[test]
fn junk_and_strangers_are_dropped_and_counted() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (addr, rx) = spawn_tfrc_receiver(2);
    let mut s = tfrc_sender(addr);
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let me = s.local_addr().unwrap();
    // Junk at the sender from a stranger (unexpected), junk at the receiver before any data
    // (malformed: it does not decode), a data-looking header cut short (malformed).
    stranger.send_to(b"\x54\x46\x01\x02garbage", me).unwrap();
    stranger.send_to(&[0u8; 3], addr).unwrap();
    stranger
        .send_to(&[0x54, 0x46, 0x01, 0x01, 0, 0], addr)
        .unwrap();
    stranger
        .send_to(&vec![0xAB; 70_000][..65_000], addr)
        .unwrap();
    s.run_until(Time::from_millis(1500)).unwrap();
    // A well-formed data header from a stranger once the receiver has its peer: unexpected.
    let mut pkt = [0u8; 100];
    let h = tfcc_core::tfrc::DataHeader {
        seq: 5,
        timestamp: Time(1),
        rtt: Dur(1),
        rtt_sample: Dur(1),
        rate: 1,
        mode: tfcc_core::tfrc::Mode::CongestionControl,
        round: 0,
    };
    h.encode(&mut pkt).unwrap();
    stranger.send_to(&pkt, addr).unwrap();
    let (_, rc, first) = rx.join().unwrap();
    assert_eq!(s.counters().unexpected, 1, "{:?}", s.counters());
    // Each side names its first drop, for a one-line warning rather than one per datagram.
    let stranger = stranger.local_addr().unwrap();
    assert_eq!(s.first_drop(), Some((stranger, DropReason::Unexpected)));
    let (from, why) = first.expect("the receiver dropped junk");
    assert_eq!(from, stranger);
    assert!(matches!(why, DropReason::Malformed(_)), "{why:?}");
    assert!(why.to_string().contains("truncated"), "{why}");
    assert_eq!(rc.malformed, 3, "{rc:?}");
    assert_eq!(rc.unexpected, 1, "{rc:?}");
    assert!(rc.received >= 1, "the real flow still got through: {rc:?}");
}

#[test]
fn a_refused_send_is_counted_and_its_first_error_kept() {
    // An IPv4 socket cannot send to an IPv6 peer: every send fails, none ends the session.
    let mut s = tfrc_sender("[::1]:9".parse().unwrap());
    s.run_until(Time::from_millis(50)).unwrap();
    assert!(s.counters().send_errors >= 1, "{:?}", s.counters());
    assert!(s.first_send_error().is_some());
}

/// A receiver that wakes late reads datagrams stamped after the slice it was running: they are
/// delivered at once, but `delivered_bytes_by_end` counts them in the next slice by their
/// kernel stamps, so a per-interval figure (`tfcc recv`'s rows, the testbed's samples and
/// window edges) does not depend on how late the host woke the reader. Three 1000-byte
/// packets at 5, 13 and 21 ms of the sender's clock (which starts just after the receiver's)
/// are read only after the sender has finished, at about 25 ms.
#[test]
fn a_late_wake_up_counts_each_datagram_in_the_slice_of_its_stamp() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut rx = Session::receiver(
        CbrSink::new(),
        Protocol::Raw,
        "127.0.0.1:0",
        SessionConfig::default(),
    )
    .unwrap();
    let cfg = CbrConfig {
        rate: Rate::from_bps(1_000_000),
        packet_size: 1000,
        on_off: None,
    };
    let src =
        tfcc_sim::flow::CbrSender::new(cfg, Time::from_millis(5), Some(Time::from_millis(22)));
    let to = rx.local_addr().unwrap();
    let mut tx = Session::sender(
        src,
        Protocol::Raw,
        "127.0.0.1:0",
        to,
        SessionConfig::default(),
    )
    .unwrap();
    tx.run_until(Time::from_millis(25)).unwrap();
    assert_eq!(tx.counters().sent, 3);
    // The slice to 17 ms ends long ago: the packets of 5 and 13 ms count in it, the one of
    // 21 ms is delivered but not by its end.
    rx.run_until(Time::from_millis(17)).unwrap();
    assert_eq!(rx.delivered_bytes(), 3000);
    assert_eq!(rx.delivered_bytes_by_end(), 2000);
    // The next slice holds it.
    rx.run_until(Time::from_millis(40)).unwrap();
    assert_eq!(rx.delivered_bytes_by_end(), 3000);
    assert_eq!(rx.counters().unstamped, 0, "{:?}", rx.counters());
}
