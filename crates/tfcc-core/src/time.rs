//! Integer time: instants and durations in nanoseconds.
//!
//! Every clock in tfcc is an integer count of nanoseconds (DESIGN.md, "Core abstractions"), so a
//! simulated run is bit-for-bit reproducible and never accumulates floating-point drift over hours
//! of simulated time. `u64` nanoseconds cover 584 years. Conversions to and from seconds as `f64`
//! exist for the equations and for reporting: from seconds they round to the nearest nanosecond,
//! to seconds they give the double nearest the exact count ([`nanos_to_secs_f64`]), so an
//! instant of 300 ms is written and printed as `0.3`, never `0.30000000000000004`.

use core::fmt;
use core::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// A point in time, in nanoseconds since the start of a run (simulator) or of a session (UDP).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A non-negative span of time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    /// A time later than any a run reaches; used as "never" for timers.
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_micros(us: u64) -> Time {
        Time(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    /// Seconds as a float, rounded to the nearest nanosecond; negative or NaN input gives zero.
    pub fn from_secs_f64(s: f64) -> Time {
        Time(secs_to_nanos(s))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as the double nearest the exact value ([`nanos_to_secs_f64`]).
    pub fn as_secs_f64(self) -> f64 {
        nanos_to_secs_f64(self.0)
    }
    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
    pub const fn checked_since(self, earlier: Time) -> Option<Dur> {
        match self.0.checked_sub(earlier.0) {
            Some(d) => Some(Dur(d)),
            None => None,
        }
    }
    pub const fn saturating_add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Dur {
        Dur(ns)
    }
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    /// Seconds as a float, rounded to the nearest nanosecond; negative or NaN input gives zero,
    /// values beyond `u64` nanoseconds saturate.
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur(secs_to_nanos(s))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as the double nearest the exact value ([`nanos_to_secs_f64`]).
    pub fn as_secs_f64(self) -> f64 {
        nanos_to_secs_f64(self.0)
    }
    /// Milliseconds as the double nearest the exact value (for counts below 2^53, as
    /// [`nanos_to_secs_f64`]).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    pub const fn saturating_sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
    pub const fn saturating_mul(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
    /// Multiply by a float factor (e.g. `k·RTT`), rounding to the nearest nanosecond.
    pub fn mul_f64(self, k: f64) -> Dur {
        Dur(secs_to_nanos(self.0 as f64 * k * 1e-9))
    }
}

/// Seconds, as the double nearest to `ns / 10⁹`: the one helper every integer time goes through
/// on its way to a float (the equations, `summary.json`, the `t` columns of `timeseries.parquet`
/// and `queues.parquet`), so 300 ms is `0.3` and 60 s is `60.0`.
///
/// Both `ns as f64` (exact below 2^53 ns, 104 days) and `1e9` are exact doubles, and IEEE 754
/// division is correctly rounded, so the quotient is the nearest double to the exact value and
/// prints as the shortest decimal of the nanosecond count (`0.3`, `1.000000001`). Multiplying by
/// `1e-9` instead (which is not exactly 10⁻⁹) is off by one unit in the last place for about 40 %
/// of whole milliseconds (`0.30000000000000004`, `60.00000000000001`), and `std`'s
/// `Duration::as_secs_f64` (whole seconds plus the fraction) for about 0.1 %. Beyond 2^53 ns
/// the count itself is rounded first (an error below 10⁻¹⁵ relative).
pub fn nanos_to_secs_f64(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// [`nanos_to_secs_f64`] of a `std` duration (the testbed's wall clock); saturates beyond `u64`
/// nanoseconds.
pub fn std_secs_f64(d: std::time::Duration) -> f64 {
    nanos_to_secs_f64(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn secs_to_nanos(s: f64) -> u64 {
    let ns = (s * 1e9).round();
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns as u64
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0 + d.0)
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 += d.0;
    }
}
impl Sub<Dur> for Time {
    type Output = Time;
    fn sub(self, d: Dur) -> Time {
        Time(self.0 - d.0)
    }
}
/// The span between two instants. Panics (in debug builds) if `o` is later: callers that cannot
/// rule that out use [`Time::saturating_since`].
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, o: Time) -> Dur {
        Dur(self.0 - o.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0 + o.0)
    }
}
impl AddAssign for Dur {
    fn add_assign(&mut self, o: Dur) {
        self.0 += o.0;
    }
}
impl Sub for Dur {
    type Output = Dur;
    fn sub(self, o: Dur) -> Dur {
        Dur(self.0 - o.0)
    }
}
impl SubAssign for Dur {
    fn sub_assign(&mut self, o: Dur) {
        self.0 -= o.0;
    }
}
impl Mul<u64> for Dur {
    type Output = Dur;
    fn mul(self, k: u64) -> Dur {
        Dur(self.0 * k)
    }
}
impl Div<u64> for Dur {
    type Output = Dur;
    fn div(self, k: u64) -> Dur {
        Dur(self.0 / k)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
/// The largest unit that keeps the integer part non-zero, with the exact decimal fraction of the
/// nanosecond count (trailing zeros dropped): `3716111` ns is `3.716111ms`, never a float's
/// `3.7161109999999997ms`, and the text parses back to the same duration. Zero is `0s`: messages
/// name times such as a range's start, where `0ns` read as a unit chosen for precision.
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (unit, digits, suffix) = match self.0 {
            0 => return f.write_str("0s"),
            1_000_000_000.. => (1_000_000_000, 9, "s"),
            1_000_000.. => (1_000_000, 6, "ms"),
            1_000.. => (1_000, 3, "us"),
            _ => return write!(f, "{}ns", self.0),
        };
        let (whole, frac) = (self.0 / unit, self.0 % unit);
        if frac == 0 {
            return write!(f, "{whole}{suffix}");
        }
        let frac = format!("{frac:0digits$}");
        write!(f, "{whole}.{}{suffix}", frac.trim_end_matches('0'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_their_exact_decimal() {
        let show = |ns: u64| Dur(ns).to_string();
        assert_eq!(show(3_716_111), "3.716111ms");
        assert_eq!(show(100_000_000), "100ms");
        assert_eq!(show(1_500_000_000), "1.5s");
        assert_eq!(show(60_000_000_007), "60.000000007s");
        assert_eq!(show(50_000), "50us");
        assert_eq!(show(1_001), "1.001us");
        assert_eq!(show(999), "999ns");
        assert_eq!(show(0), "0s");
        assert_eq!(show(u64::MAX), "18446744073.709551615s");
    }

    #[test]
    fn float_conversions_round_to_the_nearest_nanosecond() {
        assert_eq!(Dur::from_secs_f64(0.1), Dur(100_000_000));
        assert_eq!(Dur::from_secs_f64(1e-10), Dur(0));
        assert_eq!(Dur::from_secs_f64(-3.0), Dur(0));
        assert_eq!(Dur::from_secs_f64(f64::NAN), Dur(0));
        assert_eq!(Dur::from_secs_f64(1e30), Dur::MAX);
        assert_eq!(Time::from_millis(20).as_secs_f64(), 0.02);
    }

    /// The exact decimal of `ns / 10⁹` with trailing zeros dropped, as Rust prints the nearest
    /// double to it (every decimal of up to 15 significant digits has its own double).
    fn exact_decimal(ns: u64) -> String {
        let (whole, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
        if frac == 0 {
            return whole.to_string();
        }
        format!("{whole}.{}", format!("{frac:09}").trim_end_matches('0'))
    }

    fn assert_exact(ns: u64) {
        let s = nanos_to_secs_f64(ns);
        assert_eq!(s.to_string(), exact_decimal(ns), "{ns} ns");
        assert_eq!(Dur::from_secs_f64(s), Dur(ns), "{ns} ns round trip");
        assert_eq!(Time(ns).as_secs_f64(), s);
        assert_eq!(Dur(ns).as_secs_f64(), s);
        let std = std::time::Duration::from_nanos(ns);
        assert_eq!(std_secs_f64(std), s);
    }

    #[test]
    fn seconds_are_the_nearest_double_to_the_nanosecond_count() {
        // the reported cases: `ns × 1e-9` gave 0.30000000000000004 and 60.00000000000001
        assert_eq!(Time::from_millis(300).as_secs_f64().to_string(), "0.3");
        assert_eq!(Dur::from_secs(60).as_secs_f64().to_string(), "60");
        assert_eq!(Dur::from_millis(300).as_millis_f64(), 300.0);
        assert_eq!(Dur(1_500).as_millis_f64().to_string(), "0.0015");
        // every millisecond of a 20-minute run (a sample instant at any whole-ms interval)
        for ms in 0..1_200_000u64 {
            assert_exact(ms * 1_000_000);
        }
        // every nanosecond around a few seconds, and a spread of counts up to 10^15 ns
        // (11.6 days: 15 significant digits), from a fixed xorshift sequence
        for ns in (0..5_000u64).chain(999_995_000..1_000_005_000) {
            assert_exact(ns);
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            assert_exact(x % 1_000_000_000_000_000);
            assert_exact(x % 1_000_000_000_000);
        }
    }

    #[test]
    fn arithmetic_and_saturation() {
        let t = Time::from_secs(1) + Dur::from_millis(5);
        assert_eq!(t - Time::from_secs(1), Dur::from_millis(5));
        assert_eq!(Time::ZERO.saturating_since(t), Dur::ZERO);
        assert_eq!(Time::ZERO.checked_since(t), None);
        assert_eq!(Time::MAX.saturating_add(Dur(1)), Time::MAX);
        assert_eq!(Dur::from_millis(100).mul_f64(4.0), Dur::from_millis(400));
    }

    #[test]
    fn display_picks_a_readable_unit() {
        assert_eq!(Dur::from_millis(20).to_string(), "20ms");
        assert_eq!(Dur::from_secs(3).to_string(), "3s");
        assert_eq!(Dur(1500).to_string(), "1.5us");
    }
}
