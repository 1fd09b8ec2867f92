//! `decode_datagram`: any tfcc UDP payload's header as a dict, for scripts and tests that read
//! captures. The framing is tfcc-net's (`wire::identify` names the protocol from the type word,
//! `wire::decode` reads the header, as the transport does), so Python keeps no `struct` offsets
//! of its own that could drift from the Rust layouts.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tfcc_core::Header;
use tfcc_net::wire::{self, Direction};

/// The header at the front of `payload` (a UDP payload as tfcc's transport and testbed send
/// it): `protocol` (`raw`, `tfrc`, `tfwc`, `warc`, `tear`, `tfrcp`), `kind` (the trace's and
/// the Wireshark dissector's name: `tfrc-feedback`, `rate-data`, ...), `header_len` (where the
/// payload starts) and the header's fields by their Rust names, times and durations in integer
/// nanoseconds. A TFWC ACK gives its Ack Vector's `head` and `bits` (bit k: packet head − k
/// arrived). Anything else raises ValueError saying what is wrong.
#[pyfunction]
pub fn decode_datagram<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let (proto, dir) = wire::identify(payload).ok_or_else(|| {
        PyValueError::new_err(match payload.get(..4) {
            Some(w) => format!(
                "not a tfcc datagram: unknown type word {:#010x}",
                u32::from_be_bytes([w[0], w[1], w[2], w[3]])
            ),
            None => format!(
                "not a tfcc datagram: {} bytes, too short for a type word",
                payload.len()
            ),
        })
    })?;
    let direction = match dir {
        Direction::Data => "data",
        Direction::Feedback => "feedback",
    };
    let (header, len) = wire::decode(proto, dir, payload).map_err(|e| {
        PyValueError::new_err(format!(
            "malformed {} {direction} datagram: {e}",
            proto.name()
        ))
    })?;
    let d = PyDict::new(py);
    d.set_item("protocol", proto.name())?;
    d.set_item("kind", tfcc_sim::trace::message(&header).0.name())?;
    d.set_item("header_len", len)?;
    match header {
        Header::Raw { seq, sent_at } => {
            d.set_item("seq", seq)?;
            d.set_item("sent_at", sent_at.0)?;
        }
        Header::TfrcData(h) => {
            d.set_item("seq", h.seq)?;
            d.set_item("timestamp", h.timestamp.0)?;
            d.set_item("rtt", h.rtt.0)?;
            d.set_item("rtt_sample", h.rtt_sample.0)?;
            d.set_item("rate", h.rate)?;
            d.set_item("mode", h.mode.name())?;
            d.set_item("round", h.round)?;
        }
        Header::TfrcFeedback(f) => {
            d.set_item("seq_echo", f.seq_echo)?;
            d.set_item("timestamp_echo", f.timestamp_echo.0)?;
            d.set_item("t_delay", f.t_delay.0)?;
            d.set_item("x_recv", f.x_recv)?;
            d.set_item("p", f.p)?;
        }
        Header::TfwcData { seq, sent_at, aoa } => {
            d.set_item("seq", seq)?;
            d.set_item("sent_at", sent_at.0)?;
            d.set_item("aoa", aoa)?;
        }
        Header::TfwcAck { vector, echo } => {
            d.set_item("head", vector.head)?;
            d.set_item("bits", vector.bits)?;
            d.set_item("echo", echo.0)?;
        }
        Header::WarcData(h) => {
            d.set_item("seq", h.seq)?;
            d.set_item("sent_at", h.sent_at.0)?;
            d.set_item("rtt", h.rtt.0)?;
            d.set_item("rto", h.rto.0)?;
        }
        Header::WarcFeedback(f) => {
            d.set_item("echo", f.echo.0)?;
            d.set_item("hold", f.hold.0)?;
            d.set_item("rate", f.rate)?;
        }
        // TCP's headers never travel in tfcc's UDP framing, so wire::decode gives none.
        _ => {}
    }
    Ok(d)
}
