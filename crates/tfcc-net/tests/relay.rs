//! The delay/loss relay on real namespaces (skipped without root): a UDP echo (our own ping;
//! the machine has no `ping`) through a 20 ms-per-pass relay sees a 40 ms RTT, and the relay
//! reports its release lateness.

use std::net::UdpSocket;
use std::thread;
use std::time::{Duration, Instant};

use tfcc_core::Dur;
use tfcc_net::relay::RelayConfig;
use tfcc_net::testbed::enter;

mod common;

#[test]
fn an_echo_through_the_relay_sees_twice_the_configured_one_way_delay() {
    let Some(bed) = common::ten_mbps_dumbbell() else {
        return;
    };
    let relay = bed
        .start_relay(RelayConfig {
            default_delay: Dur::from_millis(20),
            ..RelayConfig::default()
        })
        .unwrap();
    const PROBES: usize = 10;
    let rns = bed.receiver_ns();
    let echo = thread::spawn(move || {
        enter(&rns).unwrap();
        let s = UdpSocket::bind("10.78.2.1:7").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let mut buf = [0u8; 64];
        for _ in 0..PROBES {
            let Ok((n, from)) = s.recv_from(&mut buf) else {
                break;
            };
            s.send_to(&buf[..n], from).unwrap();
        }
    });
    let sns = bed.sender_ns();
    let rtts = thread::spawn(move || {
        enter(&sns).unwrap();
        let s = UdpSocket::bind("10.78.1.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        thread::sleep(Duration::from_millis(100)); // the echo socket is bound
        let mut rtts = Vec::new();
        let mut buf = [0u8; 64];
        for k in 0..PROBES as u8 {
            let t = Instant::now();
            s.send_to(&[k; 32], "10.78.2.1:7").unwrap();
            if s.recv_from(&mut buf).is_ok() {
                rtts.push(t.elapsed().as_secs_f64() * 1e3);
            }
            thread::sleep(Duration::from_millis(50));
        }
        rtts
    })
    .join()
    .unwrap();
    echo.join().unwrap();
    let stats = relay.stop().unwrap();
    eprintln!(
        "echo RTTs {rtts:.2?} ms; relay: {} packets, lateness p50 {} p99 {} max {}, realtime {}",
        stats.forwarded,
        stats.lateness.quantile(0.5),
        stats.lateness.quantile(0.99),
        stats.lateness.max(),
        stats.realtime
    );
    assert_eq!(rtts.len(), PROBES, "every probe came back");
    // Each probe passes twice; the kernel's own packets on the TUN (an IPv6 solicitation when
    // it comes up) may add a few.
    assert!(
        (2 * PROBES as u64..2 * PROBES as u64 + 5).contains(&stats.forwarded),
        "{} packets relayed",
        stats.forwarded
    );
    let min = rtts.iter().cloned().fold(f64::INFINITY, f64::min);
    let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
    // The minimum is the emulated path (20 ms each way) plus the veths' and sockets' ~0.2 ms;
    // the mean may carry a VM stall, so it gets a looser bound.
    assert!((40.0..41.0).contains(&min), "min RTT {min} ms");
    assert!((40.0..45.0).contains(&mean), "mean RTT {mean} ms");
}
