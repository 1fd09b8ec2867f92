//! Driving a TFWC sender and receiver through the sans-IO API over a virtual path.
//!
//! TFWC is Ack-clocked: the receiver answers every data packet with an Ack Vector, the sender
//! judges losses from it, and a new packet may leave while fewer than `cwnd` packets are
//! outstanding. As in `tfrc_pair.rs`, the application owns the clock and the sockets and the
//! packets cross the virtual path (20 ms each way, every 40th data packet lost) as bytes, in
//! the wire form of [`tfcc_core::tfwc::wire`]. The sender's Ack of Ack (`aoa`, in each data
//! header) lets the receiver prune its vector.
//!
//! Run with `cargo run -p tfcc-core --example tfwc_pair`.

use std::collections::VecDeque;

use tfcc_core::tfwc::wire::{decode_ack, decode_data, encode_ack, encode_data, DataHeader};
use tfcc_core::tfwc::{TfwcConfig, TfwcReceiver, TfwcSender};
use tfcc_core::{Dur, Endpoint, Header, Packet, Receiver, Time};

const ONE_WAY: Dur = Dur::from_millis(20);
const LOSS_EVERY: u64 = 40;

type InFlight = VecDeque<(Time, Vec<u8>)>;

fn main() {
    let cfg = TfwcConfig::default();
    cfg.validate().expect("a valid configuration");
    let mut now = Time::ZERO;
    let mut sender = TfwcSender::new(cfg.clone(), now);
    let mut receiver = TfwcReceiver::new(&cfg);

    let mut to_receiver: InFlight = VecDeque::new();
    let mut to_sender: InFlight = VecDeque::new();
    let end = Time::from_secs(20);
    let mut next_print = Time::ZERO;

    while now < end {
        while let Some(pkt) = sender.poll_transmit(now) {
            let Header::TfwcData { seq, sent_at, aoa } = pkt.header else {
                unreachable!("a TFWC sender emits TFWC data")
            };
            let mut datagram = Vec::with_capacity(pkt.size as usize);
            encode_data(&DataHeader { seq, sent_at, aoa }, &mut datagram);
            // The media payload follows the header, up to the packet size.
            datagram.resize((pkt.size as usize).max(datagram.len()), 0);
            if seq % LOSS_EVERY != LOSS_EVERY - 1 {
                to_receiver.push_back((now + ONE_WAY, datagram));
            }
        }
        while let Some(pkt) = receiver.poll_transmit(now) {
            let Header::TfwcAck { vector, echo } = pkt.header else {
                unreachable!("a TFWC receiver emits Ack Vectors")
            };
            let mut datagram = Vec::new();
            encode_ack(&vector, echo, None, &mut datagram);
            to_sender.push_back((now + ONE_WAY, datagram));
        }

        if now >= next_print {
            let st = sender.stats();
            println!(
                "t={:5.2}s  mode={:<9}  cwnd={:3} (1/f(p) = {:6.2})  p={:.4}  rtt={:5.1} ms",
                now.as_secs_f64(),
                st.mode,
                sender.cwnd(),
                sender.window_exact(),
                st.p.unwrap_or(0.0),
                st.rtt.map_or(0.0, Dur::as_millis_f64),
            );
            next_print += Dur::from_secs(2);
        }

        let arrivals = [to_receiver.front(), to_sender.front()]
            .into_iter()
            .flatten()
            .map(|(t, _)| *t);
        let timers = [sender.next_timeout(), receiver.next_timeout()]
            .into_iter()
            .flatten();
        now = arrivals.chain(timers).chain([next_print]).min().unwrap();

        while to_receiver.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = to_receiver.pop_front().unwrap();
            match decode_data(&bytes) {
                Ok(h) => receiver.on_packet(
                    now,
                    &Packet {
                        size: bytes.len() as u32,
                        header: Header::TfwcData {
                            seq: h.seq,
                            sent_at: h.sent_at,
                            aoa: h.aoa,
                        },
                    },
                ),
                Err(e) => eprintln!("dropped a datagram: {e}"),
            }
        }
        while to_sender.front().is_some_and(|(t, _)| *t <= now) {
            let (_, bytes) = to_sender.pop_front().unwrap();
            match decode_ack(&bytes) {
                Ok(a) => sender.on_packet(
                    now,
                    &Packet {
                        size: bytes.len() as u32,
                        header: Header::TfwcAck {
                            vector: a.to_vector(),
                            echo: a.echo,
                        },
                    },
                ),
                Err(e) => eprintln!("dropped an ACK: {e}"),
            }
        }
        sender.on_timeout(now);
        receiver.on_timeout(now);
    }

    let p = sender.stats().p.unwrap_or(0.0);
    println!(
        "receiver got {} bytes; sender's p = {p:.4} (every {LOSS_EVERY}th packet lost), cwnd = {}, \
         TCP equation window 1/f(p) = {:.2}",
        receiver.delivered_bytes(),
        sender.cwnd(),
        tfcc_core::equation::Equation::pftk().window(p),
    );
}
