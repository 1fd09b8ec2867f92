//! The session clock: `CLOCK_MONOTONIC` in integer nanoseconds since the session started.
//!
//! Endpoints take [`Time`] since an arbitrary origin (tfcc_core::time); a session's origin is
//! its construction. The kernel stamps received datagrams with `CLOCK_REALTIME`
//! (`SO_TIMESTAMPNS`, socket(7)), which NTP may step, so a stamp is turned into session time by
//! its age: `arrival = monotonic_now - (realtime_now - stamp)`, with both clocks read together
//! when the datagram is picked up. A step between the two reads is the only error, and the age
//! is clamped to be non-negative.

use tfcc_core::time::Time;

/// Nanoseconds of `clock` (a `CLOCK_*` id); 0 if the call fails, which it cannot for the
/// clocks used here.
pub(crate) fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    timespec_ns(&ts)
}

/// A timespec as nanoseconds, saturating on nonsense (negative) values.
pub(crate) fn timespec_ns(ts: &libc::timespec) -> u64 {
    let s = u64::try_from(ts.tv_sec).unwrap_or(0);
    let ns = u64::try_from(ts.tv_nsec).unwrap_or(0);
    s.saturating_mul(1_000_000_000).saturating_add(ns)
}

/// A monotonic clock whose zero is the moment it was created.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock reading zero now.
    pub fn new() -> Clock {
        Clock {
            origin: clock_ns(libc::CLOCK_MONOTONIC),
        }
    }

    /// Session time now.
    pub fn now(&self) -> Time {
        Time(clock_ns(libc::CLOCK_MONOTONIC).saturating_sub(self.origin))
    }

    /// `CLOCK_MONOTONIC` nanoseconds of session time `t` (for absolute-deadline waits).
    pub fn to_monotonic_ns(&self, t: Time) -> u64 {
        self.origin.saturating_add(t.0)
    }

    /// Session time of a kernel `CLOCK_REALTIME` stamp, by its age (see the module doc).
    pub fn from_realtime_ns(&self, stamp: u64) -> Time {
        let mono = clock_ns(libc::CLOCK_MONOTONIC);
        let real = clock_ns(libc::CLOCK_REALTIME);
        let age = real.saturating_sub(stamp);
        Time(mono.saturating_sub(age).saturating_sub(self.origin))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_time_advances_and_a_fresh_stamp_maps_to_about_now() {
        let c = Clock::new();
        let a = c.now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = c.now();
        assert!(b.0 - a.0 >= 2_000_000, "{a} -> {b}");
        let stamp = clock_ns(libc::CLOCK_REALTIME) - 1_000_000; // 1 ms old
        let t = c.from_realtime_ns(stamp);
        let now = c.now();
        let age = now.0 - t.0;
        assert!((1_000_000..1_500_000).contains(&age), "age {age} ns");
        // A stamp from the future (a clock step) maps to now, not beyond it.
        let future = c.from_realtime_ns(clock_ns(libc::CLOCK_REALTIME) + 10_000_000_000);
        assert!(future <= c.now());
    }
}
