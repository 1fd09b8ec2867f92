//! Driving a TFRC sender and receiver through the sans-IO API, as a media application would.
//!
//! The application owns the clock and the sockets; tfcc-core only decides *when* a packet may
//! leave and *at what rate*. This example replaces the network by a virtual one (25 ms each
//! way, every 50th data packet lost) and a virtual clock, so it runs in a few milliseconds and
//! prints the same numbers every time. Each packet crosses the "network" as bytes, encoded with
//! [`tfcc_core::tfrc::wire`], exactly as it would cross a UDP socket: header first, then the
//! application's payload.
//!
//! The loop is the contract of [`tfcc_core::endpoint`]:
//! 1. after every event, drain `poll_transmit(now)` and send what it returns;
//! 2. sleep until the earliest of `next_timeout()` and the next arrival, then call
//!    `on_timeout(now)` or `on_packet(now, ..)`.
//!
//! Run with `cargo run -p tfcc-core --example tfrc_pair`.

use std::collections::VecDeque;

use tfcc_core::tfrc::wire::{DataHeader, FeedbackHeader, DATA_LEN, FEEDBACK_LEN};
use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
use tfcc_core::{Dur, Endpoint, Header, Packet, Receiver, Time};

/// One-way delay of the virtual path.
const ONE_WAY: Dur = Dur::from_millis(25);
/// Every `LOSS_EVERY`-th data packet is dropped (a loss event rate of about 1/LOSS_EVERY).
const LOSS_EVERY: u64 = 50;

/// A datagram in flight: its arrival time and its bytes.
type InFlight = VecDeque<(Time, Vec<u8>)>;

fn main() {
    let cfg = TfrcConfig {
        packet_size: 1200, // s: the media packet size the rate is paced with
        ..TfrcConfig::default()
    };
    cfg.validate().expect("a valid configuration");
    let mut sender = TfrcSender::new(cfg.clone());
    let mut receiver = TfrcReceiver::new(cfg.clone());

    let mut to_receiver: InFlight = VecDeque::new();
    let mut to_sender: InFlight = VecDeque::new();
    let mut now = Time::ZERO;
    let end = Time::from_secs(20);
    let mut next_print = Time::ZERO;
    let mut sent = 0u64;

    while now < end {
        // 1. Sender: everything due now. The packet is a header plus the size the rate was
        //    computed for; the application writes its media data behind the header.
        while let Some(pkt) = sender.poll_transmit(now) {
            let Header::TfrcData(h) = pkt.header else {
                unreachable!("a TFRC sender emits TFRC data")
            };
            let mut datagram = vec![0u8; (pkt.size as usize).max(DATA_LEN)];
            h.encode(&mut datagram).expect("buffer holds the header");
            // datagram[DATA_LEN..] is the application's payload (a slice of a video frame).
            sent += 1;
            if h.seq % LOSS_EVERY != LOSS_EVERY - 1 {
                to_receiver.push_back((now + ONE_WAY, datagram));
            }
        }
        // The receiver answers with reports, also as bytes.
        while let Some(pkt) = receiver.poll_transmit(now) {
            let Header::TfrcFeedback(f) = pkt.header else {
                unreachable!("a TFRC receiver emits TFRC feedback")
            };
            let mut datagram = vec![0u8; FEEDBACK_LEN];
            f.encode(&mut datagram).expect("buffer holds the header");
            to_sender.push_back((now + ONE_WAY, datagram));
        }

        if now >= next_print {
            let st = sender.stats();
            println!(
                "t={:5.2}s  mode={:<18}  X={:8.0} B/s  p={:.4}  rtt={:5.1} ms  next send at {:.4}s",
                now.as_secs_f64(),
                st.mode,
                sender.rate(),
                st.p.unwrap_or(0.0),
                st.rtt.map_or(0.0, Dur::as_millis_f64),
                sender.next_timeout().map_or(f64::NAN, Time::as_secs_f64),
            );
            next_print += Dur::from_secs(2);
        }

        // 2. Advance the clock to the next thing that happens.
        let arrivals = [to_receiver.front(), to_sender.front()]
            .into_iter()
            .flatten()
            .map(|(t, _)| *t);
        let timers = [sender.next_timeout(), receiver.next_timeout()]
            .into_iter()
            .flatten();
        now = arrivals
            .chain(timers)
            .chain([next_print])
            .min()
            .expect("the sender always has a next send time");

        // Deliver what arrives now; decode errors would be counted and dropped.
        while to_receiver.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = to_receiver.pop_front().unwrap();
            match DataHeader::decode(&bytes) {
                Ok(h) => receiver.on_packet(
                    now,
                    &Packet {
                        size: bytes.len() as u32,
                        header: Header::TfrcData(h),
                    },
                ),
                Err(e) => eprintln!("dropped a datagram: {e}"),
            }
        }
        while to_sender.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = to_sender.pop_front().unwrap();
            match FeedbackHeader::decode(&bytes) {
                Ok(f) => sender.on_packet(
                    now,
                    &Packet {
                        size: bytes.len() as u32,
                        header: Header::TfrcFeedback(f),
                    },
                ),
                Err(e) => eprintln!("dropped a report: {e}"),
            }
        }
        // Timers: calling on_timeout when nothing is due is a harmless no-op.
        sender.on_timeout(now);
        receiver.on_timeout(now);
    }

    let p = receiver.loss_event_rate();
    let rtt = sender.rtt().smoothed().map_or(0.05, Dur::as_secs_f64);
    let equation = cfg.equation().rate_secs(f64::from(cfg.packet_size), rtt, p);
    println!(
        "sent {sent} packets, receiver got {} bytes; p = {p:.4} (every {LOSS_EVERY}th packet lost), \
         final X = {:.0} B/s, equation at that p and RTT = {equation:.0} B/s",
        receiver.delivered_bytes(),
        sender.rate(),
    );
}
