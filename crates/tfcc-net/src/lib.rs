//! Real UDP transport for the tfcc protocols.
//!
//! The same sans-IO endpoints the simulator runs (tfcc_core) are driven here by a UDP socket and
//! the monotonic clock: [`Session`] owns one endpoint and one socket, speaks the protocol's own
//! wire format ([`wire`]), paces with microsecond accuracy ([`pacing`]) and stamps arrivals with
//! the kernel's receive time ([`socket`]). Linux only (`recvmsg` control messages, `ppoll`,
//! `prctl`).
//!
//! ```no_run
//! use tfcc_core::tfrc::{TfrcConfig, TfrcReceiver, TfrcSender};
//! use tfcc_core::Time;
//! use tfcc_net::{Protocol, Session, SessionConfig};
//!
//! let mut rx = Session::receiver(
//!     TfrcReceiver::new(TfrcConfig::default()),
//!     Protocol::Tfrc,
//!     "127.0.0.1:5000",
//!     SessionConfig::default(),
//! )?;
//! let mut tx = Session::sender(
//!     TfrcSender::new(TfrcConfig::default()),
//!     Protocol::Tfrc,
//!     "127.0.0.1:0",
//!     rx.local_addr()?,
//!     SessionConfig::default(),
//! )?;
//! tx.on_fill(|payload| payload.fill(b'a')); // the application's bytes
//! // each side runs its loop (normally in its own process): tx.run_until(Time::from_secs(10))
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod arrivals;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod pacing;
pub mod relay;
pub mod seqs;
pub mod session;
pub mod socket;
pub mod stop_signal;
pub mod testbed;
pub mod video;
pub mod wire;

pub use clock::Clock;
pub use session::{Counters, DropReason, Session, SessionConfig};
pub use wire::{Direction, Protocol};
