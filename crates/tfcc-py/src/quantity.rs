//! `parse_quantity`: the scenario files' quantity parser (`tfcc_core::quantity`) for Python, so
//! the sweep store orders axis values such as `"5Mbps"` and `"10Mbps"` by what they mean
//! rather than by their spelling, with the one parser the simulator uses.

use pyo3::prelude::*;
use tfcc_core::quantity::{parse_bytes, parse_dur, parse_rate};

/// `(kind, value)` for a quantity string in SI base units: `("duration", seconds)`,
/// `("rate", bits per second)` or `("size", bytes)`; `None` for text that is none of them. The
/// unit sets are disjoint, so a string is at most one kind.
#[pyfunction]
pub fn parse_quantity(text: &str) -> Option<(&'static str, f64)> {
    if let Ok(d) = parse_dur(text) {
        return Some(("duration", d.as_secs_f64()));
    }
    if let Ok(r) = parse_rate(text) {
        return Some(("rate", r.bps() as f64));
    }
    parse_bytes(text).ok().map(|b| ("size", b as f64))
}
