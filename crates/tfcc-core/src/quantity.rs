//! Physical quantities written as text: `"20ms"`, `"15Mbps"`, `"1000B"`.
//!
//! Scenario files and protocol configurations take quantities either as a string with a unit or as
//! a plain number in SI base units (seconds, bits per second, bytes), as DESIGN.md ("Scenario
//! files") specifies. Parsing lives here, beside the types it produces, so every protocol `Config`
//! can derive `serde::Deserialize` and a scenario can override any field by name.
//!
//! Parsing is exact where it can be: `"2.5ms"` is 2 500 000 ns, not a float rounded twice. A value
//! that does not fit, is negative, or has an unknown unit is an error naming what was expected.

use crate::time::{Dur, Time};
use crate::units::Rate;
use core::fmt;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// Why a quantity string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QuantityError(String);

/// Splits `"12.5 ms"` into the number and the unit, and scales the decimal number by `scale`
/// (units per base unit) exactly using integer arithmetic on the digits.
fn scaled(text: &str, units: &[(&str, u128)], what: &str) -> Result<u64, QuantityError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = (t[..split].replace('_', ""), t[split..].trim());
    let expected = || {
        let names: Vec<&str> = units
            .iter()
            .map(|u| u.0)
            .filter(|u| !u.is_empty())
            .collect();
        QuantityError(format!(
            "expected {what} such as \"{}{}\" (units: {}), got \"{text}\"",
            if what == "a rate" { "10" } else { "20" },
            names.first().copied().unwrap_or(""),
            names.join(", ")
        ))
    };
    // Exact spelling first; otherwise any case, except that `B` (bytes) and `b` (bits) differ.
    let found = units.iter().find(|(u, _)| *u == unit).or_else(|| {
        units
            .iter()
            .find(|(u, _)| u.eq_ignore_ascii_case(unit) && u.contains('B') == unit.contains('B'))
    });
    let Some(&(_, scale)) = found else {
        if let Some(rest) = t.strip_prefix('-') {
            // a known unit after the sign: the sign is what is wrong, say so
            if scaled(rest, units, what).is_ok() {
                return Err(QuantityError(format!(
                    "{what} cannot be negative, got \"{text}\""
                )));
            }
        }
        return Err(expected());
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') || frac.len() > 18 {
        return Err(expected());
    }
    let int: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| expected())?
    };
    let frac_val: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| expected())?
    };
    let denom = 10u128.pow(frac.len() as u32);
    let total = int
        .checked_mul(scale)
        .and_then(|v| v.checked_add(frac_val * scale / denom))
        .filter(|v| *v <= u64::MAX as u128)
        .ok_or_else(|| {
            QuantityError(format!(
                "{what} \"{text}\" is too large ({})",
                largest(what)
            ))
        })?;
    Ok(total as u64)
}

const DUR_UNITS: &[(&str, u128)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

const RATE_UNITS: &[(&str, u128)] = &[
    ("bps", 1),
    ("kbps", 1_000),
    ("Mbps", 1_000_000),
    ("Gbps", 1_000_000_000),
    ("b/s", 1),
    ("kb/s", 1_000),
    ("Mb/s", 1_000_000),
    ("Gb/s", 1_000_000_000),
    ("Bps", 8),
    ("KBps", 8_000),
    ("kBps", 8_000),
    ("MBps", 8_000_000),
    ("B/s", 8),
    ("KB/s", 8_000),
    ("MB/s", 8_000_000),
];

const BYTE_UNITS: &[(&str, u128)] = &[
    ("B", 1),
    ("KB", 1_000),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("KiB", 1_024),
    ("MiB", 1_048_576),
    ("GiB", 1_073_741_824),
];

/// Reads a duration: `"20ms"`, `"1.5s"`, `"100us"`, `"2min"`.
pub fn parse_dur(text: &str) -> Result<Dur, QuantityError> {
    scaled(text, DUR_UNITS, "a duration").map(Dur)
}

/// Reads a rate: bits per second (`"15Mbps"`, `"750kbps"`, `"1Gb/s"`) or, spelled with a capital
/// `B`, bytes per second (`"100KBps"`, 004's unit), as docs/scenarios.md specifies.
pub fn parse_rate(text: &str) -> Result<Rate, QuantityError> {
    scaled(text, RATE_UNITS, "a rate").map(Rate)
}

/// Reads a size in bytes: `"1000B"`, `"1.5KB"`, `"64KiB"`.
pub fn parse_bytes(text: &str) -> Result<u64, QuantityError> {
    if !text.trim().ends_with('B') {
        return Err(QuantityError(format!(
            "expected a size in bytes such as \"1000B\" (units: B, KB, MB, GB, KiB, MiB, GiB), got \"{text}\""
        )));
    }
    scaled(text, BYTE_UNITS, "a size")
}

/// What the 64-bit count behind a quantity holds, for a message that gives the range.
fn largest(what: &str) -> &'static str {
    if what == "a duration" {
        "at most 18446744073.709551615 s, 2^64 - 1 ns"
    } else if what == "a rate" {
        "at most 2^64 - 1 bit/s"
    } else {
        "at most 2^64 - 1 B"
    }
}

/// A number in SI base units as the fallback for every quantity.
fn from_number(v: f64, scale: f64, what: &str) -> Result<u64, QuantityError> {
    let x = (v * scale).round();
    if x.is_finite() && x > u64::MAX as f64 {
        // 1e12 (seconds) is positive; calling it "not non-negative" misled
        return Err(QuantityError(format!(
            "{what} {v} is too large ({})",
            largest(what)
        )));
    }
    if !x.is_finite() || x < 0.0 {
        return Err(QuantityError(format!(
            "{what} must be a non-negative number, got {v}"
        )));
    }
    Ok(x as u64)
}

struct QuantityVisitor {
    what: &'static str,
    scale: f64,
    parse: fn(&str) -> Result<u64, QuantityError>,
}

impl<'de> Visitor<'de> for QuantityVisitor {
    type Value = u64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} as a string with a unit or a number", self.what)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
        (self.parse)(v).map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        from_number(v, self.scale, self.what).map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        from_number(v as f64, self.scale, self.what).map_err(E::custom)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        if self.scale == 1.0 {
            Ok(v)
        } else {
            from_number(v as f64, self.scale, self.what).map_err(E::custom)
        }
    }
}

/// A plain number for a duration is seconds; a string carries its unit.
impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        d.deserialize_any(QuantityVisitor {
            what: "a duration",
            scale: 1e9,
            parse: |s| parse_dur(s).map(|d| d.0),
        })
        .map(Dur)
    }
}

/// Written as whole nanoseconds with their unit (`"1500000ns"`), which [`Dur`]'s `Deserialize`
/// reads back exactly: a configuration serialised and read again is the same configuration
/// (the scenario loader builds TFRC's `preset = "ns2"` that way).
impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}ns", self.0))
    }
}

/// A point in simulated time, written as the duration since the start (`start = "10s"`).
impl<'de> Deserialize<'de> for Time {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        Dur::deserialize(d).map(|x| Time(x.0))
    }
}

/// A plain number for a rate is bits per second.
impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rate, D::Error> {
        d.deserialize_any(QuantityVisitor {
            what: "a rate",
            scale: 1.0,
            parse: |s| parse_rate(s).map(|r| r.0),
        })
        .map(Rate)
    }
}

/// For `#[serde(deserialize_with = "tfcc_core::quantity::bytes_u32")]` on packet-size fields: a
/// plain number is bytes.
pub fn bytes_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = d.deserialize_any(QuantityVisitor {
        what: "a size in bytes",
        scale: 1.0,
        parse: parse_bytes,
    })?;
    u32::try_from(v).map_err(|_| de::Error::custom(format!("size {v} B does not fit in 32 bits")))
}

/// As [`bytes_u32`] for 64-bit sizes (buffers, file sizes).
pub fn bytes_u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    d.deserialize_any(QuantityVisitor {
        what: "a size in bytes",
        scale: 1.0,
        parse: parse_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_exact() {
        assert_eq!(parse_dur("20ms").unwrap(), Dur::from_millis(20));
        assert_eq!(parse_dur("2.5ms").unwrap(), Dur(2_500_000));
        assert_eq!(parse_dur("0.1ms").unwrap(), Dur(100_000));
        assert_eq!(parse_dur("100s").unwrap(), Dur::from_secs(100));
        assert_eq!(parse_dur(" 3 us ").unwrap(), Dur(3_000));
        assert_eq!(parse_dur("1_000ns").unwrap(), Dur(1_000));
    }

    #[test]
    fn rates_and_sizes() {
        assert_eq!(parse_rate("15Mbps").unwrap(), Rate::from_mbps(15));
        assert_eq!(parse_rate("1.5Mbps").unwrap(), Rate(1_500_000));
        assert_eq!(parse_rate("750kbps").unwrap(), Rate(750_000));
        assert_eq!(parse_bytes("1000B").unwrap(), 1000);
        assert_eq!(parse_bytes("64KiB").unwrap(), 65_536);
    }

    #[test]
    fn bad_quantities_say_what_was_expected() {
        let e = parse_dur("20").unwrap_err().to_string();
        assert!(e.contains("expected a duration"), "{e}");
        assert!(parse_dur("20 parsecs").is_err());
        assert!(parse_dur("1.2.3s").is_err());
        assert!(parse_dur("-1s").is_err());
        assert!(parse_dur("99999999999999h")
            .unwrap_err()
            .to_string()
            .contains("too large"));
        assert_eq!(parse_rate("100KBps").unwrap(), Rate(800_000));
        assert_eq!(parse_rate("2MBps").unwrap(), Rate(16_000_000));
        assert_eq!(parse_rate("2mbps").unwrap(), Rate(2_000_000));
        let e = parse_rate("20ms").unwrap_err().to_string();
        assert!(e.contains("expected a rate"), "{e}");
        assert!(parse_bytes("1000").is_err());
    }

    #[test]
    fn serde_takes_strings_or_si_numbers() {
        #[derive(Deserialize)]
        struct C {
            d: Dur,
            r: Rate,
            #[serde(deserialize_with = "bytes_u32")]
            s: u32,
        }
        let c: C = toml::from_str("d = \"20ms\"\nr = \"1Mbps\"\ns = \"1000B\"").unwrap();
        assert_eq!(
            (c.d, c.r, c.s),
            (Dur::from_millis(20), Rate(1_000_000), 1000)
        );
        let c: C = toml::from_str("d = 0.02\nr = 1000000\ns = 1000").unwrap();
        assert_eq!(
            (c.d, c.r, c.s),
            (Dur::from_millis(20), Rate(1_000_000), 1000)
        );
        let e = toml::from_str::<C>("d = -1\nr = 1\ns = 1")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("non-negative"), "{e}");
        let e = toml::from_str::<C>("d = 1e12\nr = 1\ns = 1")
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("a duration 1000000000000 is too large (at most 18446744073.709551615 s"),
            "{e}"
        );
    }

    #[test]
    fn a_negative_quantity_is_called_negative() {
        let e = parse_dur("-5ms").unwrap_err().to_string();
        assert_eq!(e, "a duration cannot be negative, got \"-5ms\"");
        let e = parse_rate(" -10Mbps").unwrap_err().to_string();
        assert_eq!(e, "a rate cannot be negative, got \" -10Mbps\"");
        // a sign before something that is not a quantity either: the general message
        let e = parse_dur("-5parsecs").unwrap_err().to_string();
        assert!(e.contains("expected a duration"), "{e}");
    }
}
