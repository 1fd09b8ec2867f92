//! TFWC, TCP-friendly window-based congestion control (thesis 002, Choi 2010).
//!
//! The sender turns the loss event rate into a window with the TCP equation, `W = 1/f(p)`
//! (002 Eq. 3.4), and clocks packets out on acknowledgements as TCP does, without
//! retransmitting. It measures `p` itself, from an Ack Vector the receiver returns on every
//! data packet (002 Sec. 3.2.3). Below a window of two packets it paces packets by a timer
//! instead (the hybrid mode, 002 Sec. 3.3.2).
//!
//! - [`ack_vector`]: the receiver's record of what arrived and its RFC 4340 run-length wire form;
//! - [`config`]: every constant of the thesis as a field;
//! - [`sender`] and [`receiver`]: the sans-IO endpoints.

pub mod ack_vector;
pub mod config;
pub mod receiver;
pub mod sender;
pub mod wire;

#[cfg(test)]
mod tests;

pub use ack_vector::AckVector;
pub use config::{
    FirstLossSeed, HistoryWeights, JitterRule, Rounding, RttEstimator, StallLosses, TailPacket,
    TfwcConfig,
};
pub use receiver::TfwcReceiver;
pub use sender::TfwcSender;
