//! tfcc-core: sans-IO TCP-friendly congestion control.
//!
//! Deterministic and free of I/O: nothing here reads a clock, sleeps, spawns, or touches a socket.
//! Time is passed in as integer nanoseconds ([`time::Time`]); protocols are state machines fed
//! with events and polled for packets ([`endpoint`]). The same code runs in the simulator
//! (`tfcc-sim`), over real UDP (`tfcc-net`) and from Python (`tfcc-py`).
//!
//! Shared pieces, each implemented once and used by every protocol:
//! - [`equation`]: the TCP throughput models (simple and Padhye/PFTK) as rate and as window, and
//!   their inverses;
//! - [`loss_events`]: loss detection with reordering tolerance and grouping into loss events;
//! - [`loss_history`]: the average-loss-interval estimator (and the alternatives 004 rejects);
//! - [`rtt`]: TFRC's RTT EWMA and TCP's SRTT/RTTVAR/RTO;
//! - [`quantity`]: `"20ms"`/`"15Mbps"`/`"1000B"` parsing, so every `Config` derives `Deserialize`.
//!
//! Protocols, one module each: [`tfrc`] (004's TFRC, RFC 5348 where the thesis is silent),
//! [`tfwc`] (002's window-based TFWC with its Ack Vector), [`tcp`] (ns-2's Reno, NewReno and
//! SACK baselines, and TTFWC and predictable TCP on the same sender), [`warc`] (003's WARC and
//! the rate sender and receiver that [`tear`] and [`tfrcp`] share).
//!
//! # Embedding a controller
//!
//! A media application drives a sender and a receiver through [`Endpoint`]: it feeds packets
//! and the time, sends what `poll_transmit` returns, and sleeps until `next_timeout`. The
//! crate's examples do this end to end over a virtual path, with packets crossing as wire
//! bytes: `cargo run -p tfcc-core --example tfrc_pair` (allowed rate and next send time) and
//! `--example tfwc_pair` (window and Ack Vector). `tfcc-net`'s `Session` is the same loop over
//! a real UDP socket.
//! Gateway scheduling: [`msfrs`] (003 Ch. 4, MOA + WRC request scheduling).
//! Media coupling: [`send_buffer_control`] (002 Sec. 6.2 and App. C, Vic's frame skipping and
//! quantizer control from the send-buffer length).

#![forbid(unsafe_code)]

pub mod endpoint;
pub mod equation;
pub mod loss_events;
pub mod loss_history;
pub mod msfrs;
pub mod packet;
pub mod quantity;
pub mod ring;
pub mod rtt;
pub mod send_buffer_control;
pub mod tcp;
pub mod tear;
#[cfg(test)]
mod testing;
pub mod tfrc;
pub mod tfrcp;
pub mod tfwc;
pub mod time;
mod uniform;
pub mod units;
pub mod warc;

pub use endpoint::{Endpoint, Receiver, Sender, Stats};
pub use packet::{Header, Packet};
pub use time::{Dur, Time};
pub use units::Rate;
