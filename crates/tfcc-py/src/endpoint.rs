//! What the Python endpoint classes (`tfrc.rs`, `tfwc.rs`) share: the application's clock and
//! the size of a datagram as a packet.

use tfcc_core::Time;

/// Time moves forward only: a call with an earlier `now` than the last is taken at the last.
pub(crate) fn clamp(last: &mut Time, now_ns: u64) -> Time {
    *last = (*last).max(Time(now_ns));
    *last
}

/// A datagram's length as a packet size (saturating: a UDP datagram is far below `u32::MAX`).
pub(crate) fn datagram_size(datagram: &[u8]) -> u32 {
    u32::try_from(datagram.len()).unwrap_or(u32::MAX)
}
