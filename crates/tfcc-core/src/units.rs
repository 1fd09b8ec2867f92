//! Rates and sizes.
//!
//! Conventions used across tfcc (DESIGN.md, "Core abstractions"): link and configured rates are
//! [`Rate`], an integer number of **bits per second**, so serialisation times are exact integers;
//! packet and segment sizes are plain `u32` **bytes**; the throughput equations work in `f64`
//! **bytes per second** (the unit of RFC 5348 and of 004 Eq. 2.7) and packets per RTT, because they
//! are models, not clocks.

use crate::time::Dur;
use core::fmt;

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub const ZERO: Rate = Rate(0);

    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    pub const fn from_kbps(k: u64) -> Rate {
        Rate(k * 1_000)
    }
    pub const fn from_mbps(m: u64) -> Rate {
        Rate(m * 1_000_000)
    }
    /// From bytes per second as a float, rounded to the nearest bit/s (negative or NaN gives 0).
    pub fn from_bytes_per_sec(bytes_per_sec: f64) -> Rate {
        let b = (bytes_per_sec * 8.0).round();
        if b.is_nan() || b <= 0.0 {
            Rate(0)
        } else if b >= u64::MAX as f64 {
            Rate(u64::MAX)
        } else {
            Rate(b as u64)
        }
    }
    pub const fn bps(self) -> u64 {
        self.0
    }
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// Serialisation time of `bytes` at this rate, rounded up to the next nanosecond so that a
    /// link never carries more than its rate. A zero rate gives [`Dur::MAX`] (a link that is down).
    pub fn tx_time(self, bytes: u32) -> Dur {
        if self.0 == 0 {
            return Dur::MAX;
        }
        let num = bytes as u128 * 8 * 1_000_000_000;
        let den = self.0 as u128;
        Dur(num.div_ceil(den).min(u64::MAX as u128) as u64)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        if b >= 1e9 {
            write!(f, "{}Gbps", b / 1e9)
        } else if b >= 1e6 {
            write!(f, "{}Mbps", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{}kbps", b / 1e3)
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_and_rounds_up() {
        assert_eq!(Rate::from_mbps(8).tx_time(1000), Dur::from_millis(1));
        assert_eq!(Rate::from_mbps(15).tx_time(1000), Dur(533_334));
        assert_eq!(Rate::ZERO.tx_time(1), Dur::MAX);
    }

    #[test]
    fn byte_rates_round_trip() {
        assert_eq!(Rate::from_bytes_per_sec(125_000.0), Rate::from_mbps(1));
        assert_eq!(Rate::from_mbps(1).bytes_per_sec(), 125_000.0);
        assert_eq!(Rate::from_bytes_per_sec(-1.0), Rate::ZERO);
        assert_eq!(Rate::from_kbps(1500).to_string(), "1.5Mbps");
    }
}
